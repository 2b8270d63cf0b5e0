import { describe, expect, it } from 'vitest';
import { ProviderRejectedError } from '@shared/providers/provider-errors';
import { KycServiceClient } from '@shared/providers/kyc-client';
import type { KycCallbackPayload, SimulatorOptions } from '@simulator/index';
import { simulatorPerTest, startReceiver } from './support';

const { start, onCleanup } = simulatorPerTest();

/** A verified app, the KYC types and a receiver for callbacks. */
async function setup(options: SimulatorOptions = {}) {
  const sim = await start(options);
  const receiver = await startReceiver();
  const client = new KycServiceClient({ baseUrl: sim.kycBaseUrl, timeoutMs: 2000 });
  onCleanup(() => client.close(), () => receiver.stop());
  const registered = await client.registerApp({ name: 'Acme', email: 'kyc@acme.test', origin: ['https://acme.test'] });
  await client.verifyApp({ email: 'kyc@acme.test', code: registered.value });
  const types = await client.getKycTypes();
  const typeId = (name: string) => types.find((t) => t.name === name)?._id as string;
  const appId = registered.app._id;
  const individual = (reference: string) =>
    client.createIndividualOrder({
      full_name: 'Ama Serwaa Mensah',
      email: 'ama@example.test',
      phone: '0244000000',
      app: appId,
      kyc_type: typeId('Individual'),
      callback: `${receiver.url}/kyc/cb-token`,
      redirect: 'https://acme.test/done',
      reference,
    });
  return { s: sim, client, receiver, appId, typeId, individual };
}

const events = (payloads: unknown[]) =>
  payloads.map((p) => {
    const c = p as KycCallbackPayload;
    return `${c.event}/${c.status}/${c.meta_data.kyc_status}`;
  });

describe('KYC service: app, types, orders', () => {
  it('register writes a 6-digit token to the outbox; verify refuses a wrong code; request token issues a new one', async () => {
    const sim = await start();
    const client = new KycServiceClient({ baseUrl: sim.kycBaseUrl });
    onCleanup(() => client.close());
    const registered = await client.registerApp({ name: 'Acme', email: 'kyc@acme.test', origin: ['https://acme.test'] });
    expect(registered.value).toMatch(/^\d{6}$/);
    expect(registered.app).toMatchObject({ verified: false, status: 'Active', name: 'Acme', origin: ['https://acme.test'] });
    expect(sim.admin.outbox('kyc@acme.test')).toEqual([expect.objectContaining({ kind: 'kyc-verification-token', token: registered.value })]);

    const wrong = registered.value === '000000' ? '111111' : '000000';
    await expect(client.verifyApp({ email: 'kyc@acme.test', code: wrong })).rejects.toBeInstanceOf(ProviderRejectedError);
    const again = await client.requestToken({ email: 'kyc@acme.test' });
    expect(again.value).toMatch(/^\d{6}$/);
    expect(sim.admin.outbox('kyc@acme.test').at(-1)?.token).toBe(again.value);
    const verified = await client.verifyApp({ email: 'kyc@acme.test', code: again.value as string });
    expect(verified.data).toMatchObject({ _id: registered.app._id, email: 'kyc@acme.test' });

    const raw = await fetch(`${sim.kycBaseUrl}/api/v1/app/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'kyc@acme.test', code: 'bad' }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ error: true, message: 'invalid email or verification code', data: null });
  });

  it('lists Individual and Business types with _id and flow_id, and creates both kinds of order', async () => {
    const { s, client, appId, typeId, individual, receiver } = await setup();
    const types = await client.getKycTypes();
    expect(types.map((t) => t.name)).toEqual(['Individual', 'Business']);
    for (const type of types) expect(type).toMatchObject({ _id: expect.any(String), flow_id: expect.any(String) });

    const order = await individual('user-1');
    expect(order).toMatchObject({ reference: 'user-1', callback: `${receiver.url}/kyc/cb-token`, scan_ref: expect.stringMatching(/^SCAN-/) });
    expect(order.verification_url?.startsWith(`${s.kycBaseUrl}/journey/`)).toBe(true);
    expect((await fetch(order.verification_url as string)).status).toBe(200);

    const businessInput = {
      business_name: 'Acme Trading Ltd',
      country: 'GHA',
      business_email: 'office@acme.test',
      app: appId,
      kyc_type: typeId('Business'),
      callback: `${receiver.url}/kyc/cb-token`,
      redirect: 'https://acme.test/done',
      reference: 'biz-1',
      custom_files: ['certificate_of_incorporation'],
      state_of_jurisdiction: 'GHA',
    };
    const business = await client.createBusinessOrder(businessInput);
    expect(business).toMatchObject({
      business_name: 'Acme Trading Ltd',
      custom_files: ['certificate_of_incorporation'],
      order: { status: 'Unprocessed', progress: [], error: [] },
    });
    await expect(
      client.createBusinessOrder({ ...businessInput, kyc_type: typeId('Individual'), reference: 'biz-2' }),
    ).rejects.toBeInstanceOf(ProviderRejectedError);
  });

  it('refuses an order for an app that is not verified', async () => {
    const sim = await start();
    const client = new KycServiceClient({ baseUrl: sim.kycBaseUrl });
    onCleanup(() => client.close());
    const registered = await client.registerApp({ name: 'Acme', email: 'kyc@acme.test', origin: [] });
    const error = await client
      .createIndividualOrder({
        full_name: 'A B', email: 'a@b.test', phone: '1', app: registered.app._id, kyc_type: '65a0c0ffee00000000000001',
        callback: 'http://127.0.0.1:9/cb', redirect: '', reference: 'u',
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ProviderRejectedError', providerMessage: expect.stringMatching(/not verified/) });
  });
});

describe('KYC service: journey and status', () => {
  it('answers UNPROCESSED on both status endpoints before the journey (400 on the query form)', async () => {
    const { s, client, appId, individual } = await setup();
    await individual('user-2');
    const query = await client.getVerificationStatus({ app_id: appId, user_reference: 'user-2' });
    expect(query).toMatchObject({ status: 'UNPROCESSED', processed: false });
    const path = await client.getUserStatus({ app_id: appId, reference: 'user-2' });
    expect(path).toMatchObject({ status: 'UNPROCESSED' });
    const raw = await fetch(`${s.kycBaseUrl}/api/v1/order/verification-status?app_id=${appId}&user_reference=user-2`);
    expect(raw.status).toBe(400);
    expect(await raw.json()).toEqual({ status: 'UNPROCESSED' });
  });

  it('plays the journey step by step via admin: the documented sequence, user data last, then approved on both status endpoints', async () => {
    const { s, client, appId, individual, receiver } = await setup();
    const order = await individual('user-3');
    await s.admin.advanceKyc({ order_id: order._id });
    expect(events(receiver.received.map((r) => r.body))).toEqual(['applicantCreated/init/awaiting_approval']);
    expect(await client.getUserStatus({ app_id: appId, reference: 'user-3' })).toMatchObject({ status: 'init', phase: 'initiated' });

    await s.admin.advanceKyc({ app_id: appId, reference: 'user-3', action: 'finish', decision: 'approved' });
    const bodies = receiver.received.map((r) => r.body as unknown as KycCallbackPayload);
    expect(events(bodies)).toEqual([
      'applicantCreated/init/awaiting_approval',
      'applicantPersonalInfoChanged/init/awaiting_approval',
      'applicantPending/pending/awaiting_approval',
      'applicantReviewed/completed/approved',
      'applicantReviewed/completed/approved',
    ]);
    expect(receiver.received.every((r) => r.path === '/kyc/cb-token')).toBe(true);
    expect(bodies.slice(0, 4).every((b) => b.first_name === '' && b.email === '')).toBe(true);
    expect(bodies[4]).toMatchObject({
      first_name: 'Ama',
      last_name: 'Serwaa Mensah',
      email: 'ama@example.test',
      phone: '0244000000',
      country: 'GHA',
      user_reference: 'user-3',
      order: order._id,
      kyc_token: '',
    });
    const status = await client.getVerificationStatus({ app_id: appId, user_reference: 'user-3' });
    expect(status).toMatchObject({ status: 'approved', decision: 'approved', processed: true });
    expect(status.record).toMatchObject({ reference: 'user-3', scan_ref: order.scan_ref, full_name: 'Ama Serwaa Mensah' });
    expect(await client.getUserStatus({ app_id: appId, reference: 'user-3' })).toMatchObject({ status: 'approved' });

    // GET /responses returns the callbacks posted so far.
    expect(events((await client.getResponses({ app_id: appId })) as unknown[])).toEqual(events(bodies));
  });

  it('has a rejected path, and a finished decision can change later (approved then rejected)', async () => {
    const { s, client, appId, individual, receiver } = await setup();
    const rejected = await individual('user-4');
    await s.admin.advanceKyc({ order_id: rejected._id, action: 'finish', decision: 'rejected' });
    expect(events(receiver.received.map((r) => r.body)).slice(-2)).toEqual([
      'applicantReviewed/completed/rejected',
      'applicantReviewed/completed/rejected',
    ]);
    expect(await client.getVerificationStatus({ app_id: appId, user_reference: 'user-4' })).toMatchObject({ decision: 'rejected' });

    const approved = await individual('user-5');
    await s.admin.advanceKyc({ order_id: approved._id, action: 'finish' });
    expect(await client.getUserStatus({ app_id: appId, reference: 'user-5' })).toMatchObject({ status: 'approved' });
    await s.admin.advanceKyc({ order_id: approved._id, action: 'change-decision', decision: 'rejected' });
    expect(events([receiver.received.at(-1)?.body])).toEqual(['applicantReviewed/completed/rejected']);
    expect(await client.getUserStatus({ app_id: appId, reference: 'user-5' })).toMatchObject({ status: 'rejected' });

    const tooEarly = await individual('user-6');
    const res = await fetch(`${s.url}/__admin/kyc/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order_id: tooEarly._id, action: 'change-decision' }),
    });
    expect(res.status).toBe(409);
  });

  it('plays the journey by itself in auto mode, rejecting the configured references', async () => {
    const { client, appId, individual, receiver } = await setup({ kyc: { mode: 'auto', stepDelayMs: 5, rejectReferences: ['user-bad'] } });
    await individual('user-good');
    await individual('user-bad');
    await expect.poll(() => receiver.received.length, { timeout: 5000 }).toBe(10);
    expect(await client.getUserStatus({ app_id: appId, reference: 'user-good' })).toMatchObject({ status: 'approved' });
    expect(await client.getUserStatus({ app_id: appId, reference: 'user-bad' })).toMatchObject({ status: 'rejected' });
  });
});
