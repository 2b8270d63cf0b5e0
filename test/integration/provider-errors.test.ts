import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ProviderAmbiguousError,
  ProviderError,
  ProviderRejectedError,
  ProviderUnauthorizedError,
  ProviderUnavailableError,
} from '@shared/providers/provider-errors';
import { KycServiceClient } from '@shared/providers/kyc-client';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import type { ProviderCredentials } from '@shared/ports/payouts';
import {
  closedPortUrl,
  startDestroyingServer,
  startRecordingServer,
  startSilentServer,
  type RecordingServer,
  type Reply,
} from '@test/support/http-test-servers';

const creds: ProviderCredentials = {
  partnerPublicKey: 'pk_public_0123456789',
  partnerSecretKey: 'sk_partner_abcdef',
  merchantSecretKey: 'sk_merchant_ghijkl',
  partnerId: 'partner-1',
  platformMerchantId: 'pm-1',
};
const accountNumber = '0241234567';
const payoutInput = { amount: '10.00', account_number: accountNumber, account_code: 'MTN', currency: 'GHS', withdrawal_reference: 'wd-1' };
const identity = { platform_merchant_id: 'pm-1', currency: 'GHS', withdrawal_reference: 'wd-1' };

/** Runs the call and returns the error it must fail with. */
async function failure(call: () => Promise<unknown>): Promise<ProviderError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error('expected the call to fail');
}

function expectSafe(error: ProviderError): void {
  const text = `${error.message} ${error.providerMessage ?? ''}`;
  for (const secret of [creds.partnerPublicKey, creds.partnerSecretKey, creds.merchantSecretKey, accountNumber]) {
    expect(text).not.toContain(secret);
  }
}

describe('Unavailable: nothing reached the provider', () => {
  it('connection refused on a closed port', async () => {
    const client = new PayoutServiceClient({ baseUrl: await closedPortUrl(), timeoutMs: 2000 });
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expect(error).toMatchObject({ kind: 'unavailable', operation: 'payout', code: 'ECONNREFUSED' });
    expect(error.message).toMatch(/safe to retry/);
    const kyc = new KycServiceClient({ baseUrl: await closedPortUrl(), timeoutMs: 2000 });
    expect(await failure(() => kyc.getKycTypes())).toBeInstanceOf(ProviderUnavailableError);
    client.close();
    kyc.close();
  });

  it('a host name that does not resolve', async () => {
    const client = new PayoutServiceClient({ baseUrl: 'http://payrelay-no-such-host.invalid', timeoutMs: 3000 });
    const error = await failure(() => client.verifyAccount({ account_number: accountNumber, account_code: '057', currency: 'NGN' }, creds));
    expect(error).toBeInstanceOf(ProviderUnavailableError);
    expectSafe(error);
    client.close();
  });
});

describe('Ambiguous: sent, no definite answer', () => {
  it('a server that reads the request and never answers, past the client time-out', async () => {
    const server = await startSilentServer();
    const client = new PayoutServiceClient({ baseUrl: server.url, timeoutMs: 300 });
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(error).toMatchObject({ kind: 'ambiguous', code: 'PROVIDER_TIMEOUT' });
    expect(server.received()).toBe(1);
    client.close();
    await server.close();
  });

  it('a server that closes the connection after reading the body', async () => {
    const server = await startDestroyingServer();
    const client = new PayoutServiceClient({ baseUrl: server.url, timeoutMs: 2000 });
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(error.code).toBe('ECONNRESET');
    expect(server.received()).toBe(1);
    const kyc = new KycServiceClient({ baseUrl: server.url, timeoutMs: 2000 });
    expect(await failure(() => kyc.getVerificationStatus({ app_id: 'a', user_reference: 'u' }))).toBeInstanceOf(ProviderAmbiguousError);
    client.close();
    kyc.close();
    await server.close();
  });
});

describe('answers from a provider', () => {
  let reply: Reply = { status: 200 };
  let server: RecordingServer;
  let client: PayoutServiceClient;
  let kyc: KycServiceClient;

  beforeAll(async () => {
    server = await startRecordingServer(() => reply);
    client = new PayoutServiceClient({ baseUrl: server.url, timeoutMs: 2000 });
    kyc = new KycServiceClient({ baseUrl: server.url, timeoutMs: 2000 });
  });
  afterAll(async () => {
    client.close();
    kyc.close();
    await server.close();
  });

  it.each([500, 502, 503, 504])('HTTP %i is Ambiguous', async (status) => {
    reply = { status, body: { message: 'upstream trouble' } };
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(error).toMatchObject({ httpStatus: status, providerMessage: 'upstream trouble' });
  });

  it.each([
    ['garbage', '<html>oops'],
    ['truncated JSON', '{"success": tr'],
    ['an empty body', ''],
  ])('HTTP 200 with %s is Ambiguous', async (_label, body) => {
    reply = { status: 200, body };
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(error.httpStatus).toBe(200);
  });

  it('HTTP 200 JSON without the fields the operation needs is Ambiguous', async () => {
    reply = { status: 200, body: { success: true, data: {} } };
    expect(await failure(() => client.verifyAccount({ account_number: accountNumber, account_code: 'MTN', currency: 'GHS' }, creds))).toBeInstanceOf(
      ProviderAmbiguousError,
    );
  });

  it.each([401, 403])('HTTP %i is Unauthorized', async (status) => {
    reply = { status, body: { message: 'invalid key' } };
    const error = await failure(() => client.getPayout(identity, creds));
    expect(error).toBeInstanceOf(ProviderUnauthorizedError);
    expect(error).toMatchObject({ kind: 'unauthorized', httpStatus: status, operation: 'getPayout' });
    reply = { status };
    expect(await failure(() => kyc.getKycTypes())).toBeInstanceOf(ProviderUnauthorizedError);
  });

  it('HTTP 400 with a body is Rejected', async () => {
    reply = { status: 400, body: { success: false, message: 'invalid account_code' } };
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({ kind: 'rejected', httpStatus: 400, providerMessage: 'invalid account_code', duplicateReference: false });
  });

  it('HTTP 200 with success:false is Rejected', async () => {
    reply = { status: 200, body: { success: false, message: 'account not found', data: null } };
    const error = await failure(() => client.verifyAccount({ account_number: accountNumber, account_code: 'MTN', currency: 'GHS' }, creds));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({ httpStatus: 200, duplicateReference: false });
  });

  it('HTTP 409 is Rejected with duplicateReference', async () => {
    reply = { status: 409, body: { success: false, message: 'duplicate withdrawal_reference wd-1' } };
    const error = await failure(() => client.payout(payoutInput, creds));
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect((error as ProviderRejectedError).duplicateReference).toBe(true);
  });

  it('a duplicate message under another 4xx also sets duplicateReference', async () => {
    reply = { status: 422, body: { success: false, message: 'Withdrawal reference already exists' } };
    expect(await failure(() => client.payout(payoutInput, creds))).toMatchObject({ kind: 'rejected', duplicateReference: true });
  });

  it.each([
    ['a 400 without a body', { status: 400 }],
    ['429 (rate limited)', { status: 429, body: { message: 'slow down' } }],
    ['408', { status: 408, body: 'timeout' }],
    ['a redirect', { status: 302, headers: { Location: '/elsewhere' } }],
  ])('%s is Ambiguous, never a definite refusal', async (_label, answer: Reply) => {
    reply = answer;
    expect(await failure(() => client.payout(payoutInput, creds))).toBeInstanceOf(ProviderAmbiguousError);
  });

  it('never puts keys or the full account number in errors, even when the provider echoes them', async () => {
    reply = {
      status: 400,
      body: { success: false, message: `bad key ${creds.partnerPublicKey} / ${creds.merchantSecretKey} for account ${accountNumber}` },
    };
    const error = await failure(() => client.payout(payoutInput, creds));
    expectSafe(error);
    expect(error.providerMessage).toContain('******4567');
  });
});
