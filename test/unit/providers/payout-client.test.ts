import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InvalidAccountCodeError } from '@shared/domain/account';
import { InvalidAmountError } from '@shared/domain/money';
import { PayoutServiceClient, credentialsFromSecret } from '@shared/providers/payout-client';
import { parseStatusMap } from '@shared/providers/status-map';
import { resolveSigningProfile, verifyPayload } from '@shared/signing';
import { startRecordingServer, type RecordedRequest, type RecordingServer, type Reply } from '@test/support/http-test-servers';

const creds = credentialsFromSecret({
  partner_public_key: 'pk_live_public_123',
  partner_secret_key: 'sk_partner_secret',
  merchant_secret_key: 'sk_merchant_secret',
  partner_id: 'partner-77',
  platform_merchant_id: 'pm-501',
});
const secrets = { partnerSecret: creds.partnerSecretKey, merchantSecret: creds.merchantSecretKey };
const hmacHex = (key: string, data: string) => createHmac('sha512', key).update(data).digest('hex');

let reply: (request: RecordedRequest) => Reply = () => ({ status: 200, body: { success: true, message: 'ok', data: null } });
let server: RecordingServer;
const clients: PayoutServiceClient[] = [];
const client = (options: Partial<ConstructorParameters<typeof PayoutServiceClient>[0]> = {}) => {
  const c = new PayoutServiceClient({ baseUrl: server.url, ...options });
  clients.push(c);
  return c;
};

beforeAll(async () => {
  server = await startRecordingServer((request) => reply(request));
});
afterEach(() => {
  server.requests.length = 0;
});
afterAll(async () => {
  clients.forEach((c) => c.close());
  await server.close();
});

describe('credentialsFromSecret', () => {
  it('maps the snake_case secret', () => {
    expect(creds).toEqual({
      partnerPublicKey: 'pk_live_public_123',
      partnerSecretKey: 'sk_partner_secret',
      merchantSecretKey: 'sk_merchant_secret',
      partnerId: 'partner-77',
      platformMerchantId: 'pm-501',
    });
  });
});

describe('OnboardPartner and ResetPartnerKeys', () => {
  it('onboards with the documented path, Content-Type only, and the two body fields', async () => {
    reply = () => ({ status: 200, body: { success: true, message: 'check your email', data: null, extra: 'kept' } });
    const answer = await client().onboardPartner({ partner_code: 'ACME', email: 'ops@acme.test' });
    expect(answer).toEqual({ success: true, message: 'check your email', data: null, extra: 'kept' });
    const request = server.last();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/api/v1/no-auth/PartnerP2P/OnboardPartner');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers.authorization).toBeUndefined();
    expect(request.rawBody).toBe('{"partner_code":"ACME","email":"ops@acme.test"}');
  });

  it('resets keys on ResetPartnerKeys/ by default and on GenKeysForPartner/ when configured', async () => {
    await client().resetPartnerKeys({ email: 'ops@acme.test', partner_code: 'ACME' });
    expect(server.last().url).toBe('/api/v1/no-auth/PartnerP2P/ResetPartnerKeys/');
    expect(server.last().rawBody).toBe('{"email":"ops@acme.test","partner_code":"ACME"}');
    expect(server.last().headers.authorization).toBeUndefined();
    await client({ resetKeysPath: 'GenKeysForPartner' }).resetPartnerKeys({ email: 'ops@acme.test', partner_code: 'ACME' });
    expect(server.last().url).toBe('/api/v1/no-auth/PartnerP2P/GenKeysForPartner/');
  });

  it('refuses a reset path that is not one segment', () => {
    expect(() => client({ resetKeysPath: '../Payout' })).toThrow(TypeError);
  });
});

describe('AccountVerification', () => {
  it('sends Bearer, the three fields and a partner-secret signature; returns the name with extra fields', async () => {
    reply = () => ({ status: 200, body: { success: true, message: 'found', data: { account_name: 'KOFI MENSAH', bank: 'X' }, trace: 'abc' } });
    const answer = await client({ bearerPrefix: false }).verifyAccount(
      { account_number: '0241234567', account_code: 'mtn', currency: 'GHS' },
      creds,
    );
    expect(answer).toEqual({ success: true, message: 'found', data: { account_name: 'KOFI MENSAH', bank: 'X' }, trace: 'abc' });
    const request = server.last();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/api/v1/no-auth/PartnerP2P/AccountVerification/');
    // The provider's documentation shows Bearer for account verification, so it is sent even with the prefix setting off.
    expect(request.headers.authorization).toBe('Bearer pk_live_public_123');
    expect(request.headers['content-type']).toBe('application/json');
    const unsigned = '{"account_number":"0241234567","account_code":"MTN","currency":"GHS"}';
    expect(request.rawBody).toBe(`${unsigned.slice(0, -1)},"signature":"${hmacHex(creds.partnerSecretKey, unsigned)}"}`);
    expect(verifyPayload(request.body as object, 'accountVerification', secrets)).toBe(true);
  });

  it('validates inputs before sending anything', async () => {
    await expect(client().verifyAccount({ account_number: '1', account_code: 'BANK', currency: 'GHS' }, creds)).rejects.toThrow(
      InvalidAccountCodeError,
    );
    await expect(client().verifyAccount({ account_number: '1', account_code: '057', currency: 'XYZ' }, creds)).rejects.toThrow(
      /unsupported currency/,
    );
    expect(server.requests).toHaveLength(0);
  });
});

describe('Payout', () => {
  const input = { amount: '25', account_number: '0551234567', account_code: '057', currency: 'NGN', withdrawal_reference: 'wd-42' };

  it('sends the documented fields in the documented order, a merchant+partner signature and Bearer by default', async () => {
    reply = () => ({ status: 200, body: { success: true, message: 'accepted', data: { withdrawal_reference: 'wd-42', status: 'PENDING', fee: '0.10' } } });
    const accepted = await client().payout(input, creds);
    expect(accepted.data).toEqual({ withdrawal_reference: 'wd-42', status: 'PENDING', fee: '0.10' });
    const request = server.last();
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/api/v1/no-auth/PartnerP2P/Payout/');
    expect(request.headers.authorization).toBe('Bearer pk_live_public_123');
    expect(request.headers['content-type']).toBe('application/json');
    const unsigned =
      '{"amount":"25.00","account_number":"0551234567","currency":"NGN","withdrawal_reference":"wd-42","partner_id":"partner-77","platform_merchant_id":"pm-501","account_code":"057"}';
    const signature = hmacHex(creds.merchantSecretKey + creds.partnerSecretKey, unsigned);
    expect(request.rawBody).toBe(`${unsigned.slice(0, -1)},"signature":"${signature}"}`);
    expect(verifyPayload(request.body as object, 'payout', secrets)).toBe(true);
  });

  it('sends the bare public key when the Bearer prefix is off', async () => {
    await client({ bearerPrefix: false }).payout(input, creds);
    expect(server.last().headers.authorization).toBe('pk_live_public_123');
  });

  it('signs with the configured profile', async () => {
    const profile = resolveSigningProfile('sha512-secret-body/compact-sorted/base64/payout=merchant');
    await client({ signingProfile: profile }).payout(input, creds);
    const body = server.last().body as object;
    expect(verifyPayload(body, 'payout', secrets, profile)).toBe(true);
    expect(verifyPayload(body, 'payout', secrets)).toBe(false);
  });

  it('refuses an invalid amount before sending', async () => {
    await expect(client().payout({ ...input, amount: '1e3' }, creds)).rejects.toThrow(InvalidAmountError);
    await expect(client().payout({ ...input, amount: '1.001' }, creds)).rejects.toThrow(InvalidAmountError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('GetPayout', () => {
  const identity = { platform_merchant_id: 'pm-501', currency: 'GHS', withdrawal_reference: 'wd 7/8&x' };

  it('is a GET with the three query parameters and the Authorization header', async () => {
    const record = {
      withdrawal_reference: 'wd 7/8&x',
      amount: '10.00',
      currency: 'GHS',
      status: 'SUCCESSFUL',
      channel: 'mobile_money',
      customer: { accountName: 'A', accountNumber: '****4567' },
    };
    reply = () => ({ status: 200, body: record });
    const result = await client({ bearerPrefix: false }).getPayout(identity, creds);
    expect(result).toEqual({ found: true, status: 'SUCCESSFUL', outcome: 'succeeded', raw: record });
    const request = server.last();
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/api/v1/no-auth/PartnerP2P/GetPayout');
    expect(request.query).toEqual({ platform_merchant_id: 'pm-501', currency: 'GHS', withdrawal_reference: 'wd 7/8&x' });
    expect(request.headers.authorization).toBe('pk_live_public_123');
    expect(request.rawBody).toBe('');
  });

  it.each([
    ['FAILED', 'failed'],
    ['pending', 'in_progress'],
    ['INITIATED', 'in_progress'],
    ['GATEWAY_ERROR', 'gateway_error'],
    ['REVERSED', 'reversed'],
    ['ON_HOLD', 'unrecognized'],
  ])('maps %s to %s', async (status, outcome) => {
    reply = () => ({ status: 200, body: { withdrawal_reference: identity.withdrawal_reference, status } });
    expect((await client().getPayout(identity, creds)).outcome).toBe(outcome);
  });

  it('uses a configured status map', async () => {
    reply = () => ({ status: 200, body: { withdrawal_reference: identity.withdrawal_reference, status: 'PAID' } });
    const result = await client({ statusMap: parseStatusMap('{"PAID":"succeeded"}') }).getPayout(identity, creds);
    expect(result.outcome).toBe('succeeded');
  });

  it("reports not found for the provider's empty record, and for a 404 that says the payout is unknown", async () => {
    const empty = { withdrawal_reference: '', amount: '', currency: '', status: '', customer: {} };
    reply = () => ({ status: 200, body: empty });
    expect(await client().getPayout(identity, creds)).toEqual({ found: false, outcome: 'unrecognized', raw: empty });
    for (const body of [{ withdrawal_reference: null, status: null }, { status: '' }, { withdrawal_reference: '', amount: '' }]) {
      reply = () => ({ status: 200, body });
      expect((await client().getPayout(identity, creds)).found, JSON.stringify(body)).toBe(false);
    }
    for (const body of [{ message: 'Payout not found' }, { success: false, message: 'withdrawal reference does not exist' }, { error: 'No such transaction' }, empty]) {
      reply = () => ({ status: 404, body });
      expect((await client().getPayout(identity, creds)).found, JSON.stringify(body)).toBe(false);
    }
  });

  it('treats an answer that is not the record, and a 404 that does not name the payout, as ambiguous: never "not found"', async () => {
    // "Not found" can end in FAILED or a second Payout call: a wrapper, an empty object or a gateway's
    // 404 is no evidence of it.
    const notRecords = [{}, { success: true }, { success: true, data: { withdrawal_reference: identity.withdrawal_reference, status: 'COMPLETED' } }, []];
    for (const body of notRecords) {
      reply = () => ({ status: 200, body });
      await expect(client().getPayout(identity, creds), JSON.stringify(body)).rejects.toMatchObject({ kind: 'ambiguous' });
    }
    for (const body of [{ message: 'Not Found' }, { message: 'no route matched' }, undefined]) {
      reply = () => ({ status: 404, ...(body ? { body } : {}) });
      await expect(client().getPayout(identity, creds), JSON.stringify(body)).rejects.toMatchObject({ kind: 'ambiguous' });
    }
  });

  it('treats an answer about another reference as ambiguous', async () => {
    reply = () => ({ status: 200, body: { withdrawal_reference: 'someone-else', status: 'COMPLETED' } });
    await expect(client().getPayout(identity, creds)).rejects.toMatchObject({ kind: 'ambiguous' });
  });
});

describe('keep-alive', () => {
  it('reuses one connection when on and opens one per call when off', async () => {
    reply = () => ({ status: 200, body: { success: true, message: 'ok', data: null } });
    const call = (c: PayoutServiceClient) => c.onboardPartner({ partner_code: 'A', email: 'a@b.test' });
    const before = server.connections();
    const pooled = client({ keepAlive: true });
    for (let i = 0; i < 3; i += 1) await call(pooled);
    expect(server.connections() - before).toBe(1);
    const fresh = client({ keepAlive: false });
    for (let i = 0; i < 3; i += 1) await call(fresh);
    expect(server.connections() - before).toBe(4);
  });
});

describe('base URL', () => {
  it('keeps a path prefix of the base URL', async () => {
    await client({ baseUrl: `${server.url}/gateway/` }).onboardPartner({ partner_code: 'A', email: 'a@b.test' });
    expect(server.last().url).toBe('/gateway/api/v1/no-auth/PartnerP2P/OnboardPartner');
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(() => new PayoutServiceClient({ baseUrl: 'ftp://x' })).toThrow(TypeError);
    expect(() => new PayoutServiceClient({ baseUrl: 'not a url' })).toThrow(TypeError);
  });
});
