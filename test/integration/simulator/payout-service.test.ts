import { describe, expect, it } from 'vitest';
import { makeSigningProfile, verifyPayload, withSignature } from '@shared/signing';
import {
  ProviderRejectedError,
  ProviderUnauthorizedError,
} from '@shared/providers/provider-errors';
import { credentialsFromSecret, PayoutServiceClient } from '@shared/providers/payout-client';
import { DEFAULT_COLLECTION_ORDER_FIELDS } from '@shared/providers/collection-order-shape';
import { SEEDED_ACCOUNTS } from '@simulator/index';
import { ghsPayout, payoutFixture, simulatorPerTest, startReceiver } from './support';

const { start, onCleanup } = simulatorPerTest();

describe('payout service: onboarding and keys', () => {
  it('OnboardPartner mails keys and partner_id to the outbox, readable once through the one-time link', async () => {
    const s = await start();
    const client = new PayoutServiceClient({ baseUrl: s.payoutBaseUrl });
    onCleanup(() => client.close());

    const answer = await client.onboardPartner({ partner_code: 'acme', email: 'ops@acme.test' });
    expect(answer).toMatchObject({ success: true, data: null });
    expect(answer.message).toMatch(/check your email/i);

    const [mail] = s.admin.outbox('ops@acme.test');
    expect(mail?.kind).toBe('partner-onboarded');
    expect(mail?.credentials).toMatchObject({ partner_id: expect.stringMatching(/^PTN-/), platform_merchant_id: expect.any(String) });
    const first = await fetch(mail?.link as string);
    expect(first.status).toBe(200);
    expect(((await first.json()) as { data: unknown }).data).toEqual(mail?.credentials);
    expect((await fetch(mail?.link as string)).status).toBe(410);

    await expect(client.onboardPartner({ partner_code: 'acme', email: 'ops@acme.test' })).rejects.toBeInstanceOf(ProviderRejectedError);
  });

  it.each(['ResetPartnerKeys', 'GenKeysForPartner'])('%s issues new keys: old keys get 401, partner_id stays', async (resetKeysPath) => {
    const s = await start();
    const { client, secret, creds } = payoutFixture(s, { resetKeysPath });
    onCleanup(() => client.close());
    const verify = { account_number: '0123456789', account_code: '057', currency: 'NGN' };
    await expect(client.verifyAccount(verify, creds)).resolves.toMatchObject({ data: { account_name: 'Adaeze Okafor' } });

    const answer = await client.resetPartnerKeys({ email: 'acme@example.test', partner_code: 'acme' });
    expect(answer.success).toBe(true);

    await expect(client.verifyAccount(verify, creds)).rejects.toBeInstanceOf(ProviderUnauthorizedError);
    const mail = s.admin.outbox('acme@example.test').at(-1);
    expect(mail?.kind).toBe('partner-keys-reset');
    const fresh = mail?.credentials;
    expect(fresh?.partner_id).toBe(secret.partner_id);
    expect(fresh?.partner_public_key).not.toBe(secret.partner_public_key);
    expect(fresh?.partner_secret_key).not.toBe(secret.partner_secret_key);
    await expect(client.verifyAccount(verify, credentialsFromSecret(fresh!))).resolves.toMatchObject({ success: true });

    await expect(client.resetPartnerKeys({ email: 'wrong@example.test', partner_code: 'acme' })).rejects.toBeInstanceOf(
      ProviderRejectedError,
    );
  });
});

describe('payout service: account verification', () => {
  it('answers the owner name of every seeded account, bank codes and mobile-money providers alike', async () => {
    const s = await start();
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    for (const account of SEEDED_ACCOUNTS) {
      const currency = account.currencies?.[0] ?? 'KES';
      const answer = await client.verifyAccount({ account_number: account.account_number, account_code: account.account_code, currency }, creds);
      expect(answer).toMatchObject({ success: true, data: { account_name: account.account_name } });
    }
    expect(new Set(SEEDED_ACCOUNTS.map((a) => a.account_code))).toEqual(new Set(['057', '058', '044', '030', 'MTN', 'VOD', 'Momo', 'MPESA']));
  });

  it('refuses an unknown account with HTTP 400 "account not found", and an account added at run time is found', async () => {
    const s = await start();
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    const input = { account_number: '0500000000', account_code: 'MTN', currency: 'GHS' };
    const error = await client.verifyAccount(input, creds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({ httpStatus: 400, providerMessage: 'account not found' });

    s.admin.addAccount({ account_code: 'MTN', account_number: '0500000000', account_name: 'Esi Ansah' });
    await expect(client.verifyAccount(input, creds)).resolves.toMatchObject({ data: { account_name: 'Esi Ansah' } });
  });

  it('refuses a wrong signature and a missing Bearer key with 401', async () => {
    const s = await start();
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    const input = { account_number: '0123456789', account_code: '057', currency: 'NGN' };
    await expect(client.verifyAccount(input, { ...creds, partnerSecretKey: 'not-the-secret' })).rejects.toBeInstanceOf(
      ProviderUnauthorizedError,
    );
    const res = await fetch(`${s.payoutBaseUrl}/api/v1/no-auth/PartnerP2P/AccountVerification/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ success: false, message: 'missing Authorization header (the partner public key)' });
  });

  it('answers 400 naming the problem for malformed JSON, never a 500', async () => {
    const s = await start();
    const res = await fetch(`${s.payoutBaseUrl}/api/v1/no-auth/PartnerP2P/OnboardPartner`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"partner_code":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ success: false, message: 'request body is not valid JSON' });
  });
});

describe('payout service: Payout and GetPayout', () => {
  it('accepts a payout with the PENDING acceptance shape, records one execution, and progresses after the configured checks', async () => {
    const s = await start({ progression: { settleAfterChecks: 1 } });
    const { client, creds, secret } = payoutFixture(s);
    onCleanup(() => client.close());

    const accepted = await client.payout(ghsPayout('w-1'), creds);
    expect(accepted).toMatchObject({ success: true, data: { withdrawal_reference: 'w-1', status: 'PENDING', amount: '25.50' } });

    const identity = { platform_merchant_id: secret.platform_merchant_id, currency: 'GHS', withdrawal_reference: 'w-1' };
    expect(await client.getPayout(identity, creds)).toMatchObject({ found: true, status: 'PENDING', outcome: 'in_progress' });
    const final = await client.getPayout(identity, creds);
    expect(final).toMatchObject({ found: true, status: 'COMPLETED', outcome: 'succeeded' });
    expect(final.raw).toMatchObject({ customer: { accountName: 'Kwame Mensah' }, channel: 'mobile_money', network: 'MTN' });
    expect(s.admin.ledger()).toEqual([
      { ...identity, executions: 1, calls: 1, attempts: 1, duplicates: 0, status: 'COMPLETED', amount: '25.50' },
    ]);
  });

  it('answers an unknown reference with the empty shape (found: false)', async () => {
    const s = await start();
    const { client, creds, secret } = payoutFixture(s);
    onCleanup(() => client.close());
    const result = await client.getPayout({ platform_merchant_id: secret.platform_merchant_id, currency: 'GHS', withdrawal_reference: 'nope' }, creds);
    expect(result.found).toBe(false);
    expect(result.raw).toEqual({ withdrawal_reference: '', amount: '', currency: '', status: '', customer: {} });
  });

  it('refuses a duplicate withdrawal_reference with 409 under "refuse" (duplicateReference) and executes once', async () => {
    const s = await start();
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    await client.payout(ghsPayout('dup-1'), creds);
    const error = await client.payout(ghsPayout('dup-1'), creds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderRejectedError);
    expect(error).toMatchObject({ httpStatus: 409, duplicateReference: true });
    expect(s.admin.ledger()[0]).toMatchObject({ executions: 1, attempts: 2, duplicates: 1 });
  });

  it('answers the existing payout under "return-existing" and still executes once', async () => {
    const s = await start({ duplicateRule: 'return-existing' });
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    await client.payout(ghsPayout('dup-2'), creds);
    const again = await client.payout(ghsPayout('dup-2', '99.00'), creds);
    expect(again).toMatchObject({ success: true, data: { withdrawal_reference: 'dup-2', amount: '25.50' } });
    expect(s.admin.ledger()[0]).toMatchObject({ executions: 1, attempts: 2, duplicates: 1 });
  });

  it('runs account verification itself: an unknown account is refused and nothing executes', async () => {
    const s = await start();
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    const error = await client.payout({ ...ghsPayout('w-unknown'), account_number: '0249999999' }, creds).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ProviderRejectedError', httpStatus: 400, providerMessage: 'account not found' });
    expect(s.admin.ledger()[0]).toMatchObject({ withdrawal_reference: 'w-unknown', executions: 0, status: 'NOT_CREATED' });
  });

  it('settles FAILED by the outcome rule (account number, amount) and for the seeded failing account', async () => {
    const s = await start({ progression: { outcome: { failAccountNumbers: ['0201234567'], failAmounts: ['13.13'] } } });
    const { client, creds, secret } = payoutFixture(s);
    onCleanup(() => client.close());
    await client.payout({ ...ghsPayout('f-account'), account_number: '0201234567', account_code: 'VOD' }, creds);
    await client.payout(ghsPayout('f-amount', '13.13'), creds);
    await client.payout({ amount: '5', account_number: '0999999999', account_code: '057', currency: 'NGN', withdrawal_reference: 'f-seeded' }, creds);
    await client.payout(ghsPayout('ok'), creds);
    const outcome = async (withdrawal_reference: string, currency = 'GHS') =>
      (await client.getPayout({ platform_merchant_id: secret.platform_merchant_id, currency, withdrawal_reference }, creds)).outcome;
    expect([await outcome('f-account'), await outcome('f-amount'), await outcome('f-seeded', 'NGN'), await outcome('ok')]).toEqual([
      'failed',
      'failed',
      'failed',
      'succeeded',
    ]);
  });

  it('keeps merchants of one partner apart: same reference under two merchants executes twice, once each', async () => {
    const s = await start();
    const { client, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    const second = credentialsFromSecret(s.admin.createPartner({ partner_code: 'acme', email: 'acme@example.test', platform_merchant_id: 'MER-SECOND' }));
    expect(second.partnerId).toBe(creds.partnerId);
    expect(second.merchantSecretKey).not.toBe(creds.merchantSecretKey);
    await client.payout(ghsPayout('shared-ref'), creds);
    await client.payout(ghsPayout('shared-ref'), second);
    expect(s.admin.ledger().map((e) => [e.platform_merchant_id, e.executions])).toEqual([
      [creds.platformMerchantId, 1],
      ['MER-SECOND', 1],
    ]);
    // Signing with the other merchant's secret is a signature mismatch.
    await expect(client.payout(ghsPayout('x'), { ...second, merchantSecretKey: creds.merchantSecretKey })).rejects.toBeInstanceOf(
      ProviderUnauthorizedError,
    );
  });

  it('requires the Bearer prefix by default and accepts the bare key when bearerPrefixRequired is false', async () => {
    const strict = await start();
    const bare = payoutFixture(strict, { bearerPrefix: false });
    onCleanup(() => bare.client.close());
    await expect(bare.client.payout(ghsPayout('b-1'), bare.creds)).rejects.toBeInstanceOf(ProviderUnauthorizedError);
    await strict.stop();

    const lenient = await start({ bearerPrefixRequired: false });
    const both = payoutFixture(lenient, { bearerPrefix: false });
    onCleanup(() => both.client.close());
    await expect(both.client.payout(ghsPayout('b-2'), both.creds)).resolves.toMatchObject({ success: true });
  });

  it('verifies with the configured signing profile, so a client on the same profile passes and one on the default fails', async () => {
    const profile = makeSigningProfile({ algorithm: 'sha512-secret-body', serialization: 'compact-sorted', encoding: 'base64' });
    const s = await start({ signingProfile: profile });
    const same = payoutFixture(s, { signingProfile: profile });
    const other = new PayoutServiceClient({ baseUrl: s.payoutBaseUrl });
    onCleanup(() => same.client.close(), () => other.close());
    await expect(same.client.payout(ghsPayout('p-1'), same.creds)).resolves.toMatchObject({ success: true });
    await expect(other.payout(ghsPayout('p-2'), same.creds)).rejects.toBeInstanceOf(ProviderUnauthorizedError);
  });
});

describe('payout service: collection orders and order notifications', () => {
  it('creates a collection order in the public shape through the client and notifies its payment, signed, with the public key', async () => {
    const receiver = await startReceiver();
    onCleanup(() => receiver.stop());
    const s = await start();
    const { client, secret, creds } = payoutFixture(s);
    onCleanup(() => client.close());
    s.admin.setNotificationUrl(`${receiver.url}/notify`, 'acme');
    const secrets = { partnerSecret: secret.partner_secret_key, merchantSecret: secret.merchant_secret_key };

    const answer = await client.createCollectionOrder({ partnerOrderId: 'order-1', amount: '40', currency: 'GHS', at: new Date() }, creds);
    expect(answer).toMatchObject({
      success: true,
      data: { partner_order_id: 'order-1', status: 'PENDING', payment_status: 'PENDING', virtual_account: { amount: '40.00' } },
    });
    const reference = answer.data?.order_reference as string;
    expect(s.admin.collectionOrders()).toEqual([expect.objectContaining({ order_reference: reference, platform_merchant_id: secret.platform_merchant_id, currency: 'GHS' })]);
    // The same order id twice is a duplicate the client reports as a refusal of a duplicate.
    const again = client.createCollectionOrder({ partnerOrderId: 'order-1', amount: '40', currency: 'GHS', at: new Date() }, creds);
    await expect(again).rejects.toMatchObject({ kind: 'rejected', duplicateReference: true });

    const [delivery] = await s.admin.sendOrderNotification({ order_reference: reference });
    expect(delivery?.status).toBe(200);
    const [got] = receiver.received;
    expect(got?.path).toBe('/notify');
    expect(got?.headers.authorization).toBe(secret.partner_public_key);
    expect(verifyPayload(got?.body as object, 'orderNotification', secrets)).toBe(true);
    expect(got?.body).toMatchObject({
      data: { payment: { status: 'PAID' }, order_details: { status: 'COMPLETED', partner_order_id: 'order-1', order_reference: reference } },
    });
  });

  it('serves the collection-order endpoint at a configured path, checks the signature and names missing fields', async () => {
    const s = await start({ collectionOrderPath: '/api/v1/no-auth/PartnerP2P/CreateOrder' });
    const shape = { path: '/api/v1/no-auth/PartnerP2P/CreateOrder', fields: DEFAULT_COLLECTION_ORDER_FIELDS };
    const { client, secret, creds } = payoutFixture(s, { collectionOrder: shape });
    onCleanup(() => client.close());
    await expect(client.createCollectionOrder({ partnerOrderId: 'o-2', amount: '12.5', currency: 'GHS', at: new Date() }, creds)).resolves.toMatchObject({
      data: { virtual_account: { amount: '12.50' } },
    });

    const secrets = { partnerSecret: secret.partner_secret_key, merchantSecret: secret.merchant_secret_key };
    const post = (b: object) =>
      fetch(`${s.payoutBaseUrl}/api/v1/no-auth/PartnerP2P/CreateOrder`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret.partner_public_key}`, 'content-type': 'application/json' },
        body: JSON.stringify(b),
      });
    const signed = withSignature({ partner_order_id: 'o-3', amount_to_collect: '40', timestamp: new Date().toISOString() }, 'collectionOrder', secrets);
    expect((await post({ ...signed, amount_to_collect: '41' })).status).toBe(401);
    const oldShape = await post(withSignature({ partner_order_id: 'o-4', amount: '40', currency: 'GHS' }, 'collectionOrder', secrets));
    expect(oldShape.status).toBe(400);
    expect(await oldShape.text()).toMatch(/amount_to_collect, timestamp/);
    expect((await post(signed)).status).toBe(200);
  });

  it('notifies a settled payout with its withdrawal_reference in data and in order_details.partner_order_id', async () => {
    const receiver = await startReceiver();
    onCleanup(() => receiver.stop());
    const s = await start({ notificationUrl: `${receiver.url}/payout-notify` });
    const { client, creds, secret } = payoutFixture(s);
    onCleanup(() => client.close());
    await client.payout(ghsPayout('n-1'), creds);
    await expect.poll(() => receiver.received.length).toBe(1);
    const body = receiver.received[0]?.body as { data: Record<string, unknown> };
    expect(body.data).toMatchObject({
      withdrawal_reference: 'n-1',
      platform_merchant_id: secret.platform_merchant_id,
      currency: 'GHS',
      payment: { status: 'PAID' },
      order_details: { status: 'COMPLETED', partner_order_id: 'n-1' },
    });
    expect(
      verifyPayload(body, 'orderNotification', { partnerSecret: secret.partner_secret_key, merchantSecret: secret.merchant_secret_key }),
    ).toBe(true);
    expect(s.admin.notifications()).toHaveLength(1);
  });
});
