import { describe, expect, it } from 'vitest';
import { ProviderAmbiguousError, ProviderUnauthorizedError } from '@shared/providers/provider-errors';
import { credentialsFromSecret, PayoutServiceClient } from '@shared/providers/payout-client';
import { startSimulator, type KycCallbackPayload, type SimulatorHandle } from '@simulator/index';
import { ghsPayout, payoutFixture, simulatorPerTest, startReceiver } from './support';

const { start, onCleanup } = simulatorPerTest();

function fixture(s: SimulatorHandle, timeoutMs = 2000) {
  const f = payoutFixture(s, { timeoutMs });
  onCleanup(() => f.client.close());
  const identity = (withdrawal_reference: string) => ({
    platform_merchant_id: f.secret.platform_merchant_id,
    currency: 'GHS',
    withdrawal_reference,
  });
  return { ...f, identity };
}

describe('faults on incoming operations', () => {
  it('latency delays the operation before anything is committed', async () => {
    // The client gives up long before the latency ends, with room for a loaded machine to deliver the
    // request first: a client that gave up before sending it would leave nothing in the request log.
    const s = await start({ faults: { payout: { latencyMs: 3000 } } });
    const { client, creds } = fixture(s, 1000);
    await expect(client.payout(ghsPayout('lat-1'), creds)).rejects.toBeInstanceOf(ProviderAmbiguousError);
    // The request log counts the call; nothing was executed.
    expect(s.admin.ledger()).toMatchObject([{ withdrawal_reference: 'lat-1', calls: 1, attempts: 0, executions: 0, status: 'NOT_CREATED' }]);
    expect(s.admin.faults().counts.payout).toEqual({ latency: 1 });
  });

  it('a 5xx (errorRate) answers before the commit; `times` limits it to the first call', async () => {
    const s = await start({ faults: { payout: { errorRate: 1, errorStatus: 502, times: 1 } } });
    const { client, creds } = fixture(s);
    const error = await client.payout(ghsPayout('err-1'), creds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(error).toMatchObject({ httpStatus: 502 });
    expect(s.admin.ledger()).toMatchObject([{ calls: 1, executions: 0 }]);
    await expect(client.payout(ghsPayout('err-1'), creds)).resolves.toMatchObject({ success: true });
    expect(s.admin.ledger()[0]).toMatchObject({ calls: 2, executions: 1 });
    expect(s.admin.faults().counts.payout).toEqual({ error: 1 });
  });

  it('timeout-after-commit executes the payout but never answers; GetPayout then knows it', async () => {
    const s = await start({ faults: { payout: { timeoutRate: 1, times: 1 } } });
    const { client, creds, identity } = fixture(s, 300);
    const error = await client.payout(ghsPayout('to-1'), creds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(s.admin.ledger()[0]).toMatchObject({ withdrawal_reference: 'to-1', executions: 1 });
    expect(await client.getPayout(identity('to-1'), creds)).toMatchObject({ found: true, outcome: 'succeeded' });
    expect(s.admin.faults().counts.payout).toEqual({ timeout: 1 });
  });

  it('stop() ends a held (timed-out) connection instead of leaking it', async () => {
    const s = await start({ faults: { getPayout: { timeoutRate: 1 } } });
    const { secret } = fixture(s);
    const hanging = fetch(`${s.payoutBaseUrl}/api/v1/no-auth/PartnerP2P/GetPayout?platform_merchant_id=m&currency=GHS&withdrawal_reference=r`, {
      headers: { authorization: `Bearer ${secret.partner_public_key}` },
    });
    await expect.poll(() => s.admin.faults().counts.getPayout?.timeout).toBe(1);
    await s.stop();
    await expect(hanging).rejects.toThrow();
  });

  it('reset-after-commit executes the payout and destroys the connection', async () => {
    const s = await start({ faults: { payout: { resetRate: 1 } } });
    const { client, creds } = fixture(s);
    const error = await client.payout(ghsPayout('rst-1'), creds).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderAmbiguousError);
    expect(s.admin.ledger()[0]).toMatchObject({ withdrawal_reference: 'rst-1', executions: 1 });
    expect(s.admin.faults().counts.payout).toEqual({ reset: 1 });
  });

  it('slow progression holds payouts in PENDING for extra checks', async () => {
    const s = await start({ faults: { getPayout: { slowProgressionChecks: 2 } } });
    const { client, creds, identity } = fixture(s);
    await client.payout(ghsPayout('slow-1'), creds);
    const outcomes = [];
    for (let i = 0; i < 3; i += 1) outcomes.push((await client.getPayout(identity('slow-1'), creds)).status);
    expect(outcomes).toEqual(['PENDING', 'PENDING', 'COMPLETED']);
    expect(s.admin.faults().counts.getPayout).toEqual({ slowProgression: 1 });
  });

  it('answers the alternative status words and GATEWAY_ERROR while in progress', async () => {
    const s = await start({ progression: { settleAfterChecks: 1 }, faults: { getPayout: { alternativeWordsRate: 1 } } });
    const { client, creds, identity } = fixture(s);
    await client.payout(ghsPayout('alt-1'), creds);
    expect(await client.getPayout(identity('alt-1'), creds)).toMatchObject({ status: 'INITIATED', outcome: 'in_progress' });
    expect(await client.getPayout(identity('alt-1'), creds)).toMatchObject({ status: 'SUCCESSFUL', outcome: 'succeeded' });

    s.admin.setFaults('getPayout', { gatewayErrorRate: 1 });
    await client.payout(ghsPayout('gw-1'), creds);
    expect(await client.getPayout(identity('gw-1'), creds)).toMatchObject({ status: 'GATEWAY_ERROR', outcome: 'gateway_error' });
    expect(s.admin.ledger().find((e) => e.withdrawal_reference === 'gw-1')?.status).toBe('PENDING');
  });

  it('refuses after committing, in the configured words and status; refusalRate refuses before committing', async () => {
    const s = await start({
      faults: { payout: { refusalAfterCommitRate: 1, refusals: [{ status: 200, body: '{"success":false,"message":"reference has been used"}' }], times: 1 } },
    });
    const { client, creds, identity } = fixture(s);
    await expect(client.payout(ghsPayout('rac-1'), creds)).rejects.toMatchObject({ name: 'ProviderRejectedError', httpStatus: 200, providerMessage: 'reference has been used' });
    expect(s.admin.ledger()).toMatchObject([{ withdrawal_reference: 'rac-1', calls: 1, executions: 1 }]);
    expect(await client.getPayout(identity('rac-1'), creds)).toMatchObject({ found: true });

    s.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 502, body: '<html><h1>502</h1></html>', contentType: 'text/html' }] });
    await expect(client.payout(ghsPayout('rbc-1'), creds)).rejects.toBeInstanceOf(ProviderAmbiguousError);
    expect(s.admin.ledger().find((e) => e.withdrawal_reference === 'rbc-1')).toMatchObject({ calls: 1, executions: 0 });
    expect(s.admin.faults().counts.payout).toEqual({ refusalAfterCommit: 1, refusal: 1 });
  });

  it('answers 429 with the configured Retry-After header', async () => {
    const s = await start({ faults: { getPayout: { errorRate: 1, errorStatus: 429, retryAfter: '7' } } });
    const response = await fetch(`${s.payoutBaseUrl}${'/api/v1/no-auth/PartnerP2P/GetPayout'}?platform_merchant_id=m&currency=GHS&withdrawal_reference=x`);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
  });

  it('sends a refusal\'s Retry-After header, which the client surfaces as retryAfterMs', async () => {
    const s = await start({ faults: { payout: { refusalRate: 1, refusals: [{ status: 429, body: '{"message":"slow down"}', retryAfter: '5' }] } } });
    const { client, creds } = fixture(s);
    await expect(client.payout(ghsPayout('ra-1'), creds)).rejects.toMatchObject({ name: 'ProviderAmbiguousError', httpStatus: 429, retryAfterMs: 5_000 });
    expect(() => s.admin.setFaults('payout', { refusals: [{ status: 429, body: '', retryAfter: 5 as unknown as string }] })).toThrow(/refusals\[0\]\.retryAfter/);
  });

  it('a flapping read side answers "not found" only for a payout it has already shown', async () => {
    const s = await start({ faults: { getPayout: { flapRate: 1 } } });
    const { client, creds, identity } = fixture(s);
    await client.payout(ghsPayout('flap-1'), creds);
    expect(await client.getPayout(identity('flap-1'), creds)).toMatchObject({ found: true });
    expect(await client.getPayout(identity('flap-1'), creds)).toMatchObject({ found: false });
    expect(s.admin.faults().counts.getPayout).toEqual({ flap: 1 });
  });

  it('refuses fault settings it cannot honour, naming the field', async () => {
    const s = await start();
    expect(() => s.admin.setFaults('payout', { errorStatus: 418 })).toThrow(/errorStatus must be 429 or a 5xx/);
    expect(() => s.admin.setFaults('payout', { refusals: [] })).toThrow(/refusals must be a non-empty array/);
    expect(() => s.admin.setFaults('payout', { refusals: [{ status: 200, body: 1 as unknown as string }] })).toThrow(/refusals\[0\]\.body/);
  });

  it('resets the partner keys mid-run after N calls: the next call gets 401, the mailed keys work', async () => {
    const s = await start({ faults: { payout: { resetKeysAfterCalls: 2 } } });
    const { client, creds } = fixture(s);
    await client.payout(ghsPayout('k-1'), creds);
    await client.payout(ghsPayout('k-2'), creds);
    await expect(client.payout(ghsPayout('k-3'), creds)).rejects.toBeInstanceOf(ProviderUnauthorizedError);
    const fresh = credentialsFromSecret(s.admin.outbox().at(-1)?.credentials as never);
    await expect(client.payout(ghsPayout('k-3'), fresh)).resolves.toMatchObject({ success: true });
    expect(s.admin.faults().counts.payout).toEqual({ keysReset: 1 });
    expect(s.admin.ledger().map((e) => e.executions)).toEqual([1, 1, 1]);
  });
});

describe('faults on outgoing callbacks and notifications', () => {
  it('duplicates KYC callbacks and delivers them out of order', async () => {
    const receiver = await startReceiver();
    onCleanup(() => receiver.stop());
    const s = await start({ faults: { kycCallback: { duplicateRate: 1 } } });
    const { appId, orderId } = await kycOrder(s, `${receiver.url}/cb`);
    await s.admin.advanceKyc({ order_id: orderId });
    expect(receiver.received.map((r) => (r.body as unknown as KycCallbackPayload).event)).toEqual(['applicantCreated', 'applicantCreated']);

    s.admin.setFaults('kycCallback', { outOfOrderRate: 1 });
    const second = await kycOrder(s, `${receiver.url}/cb2`, appId);
    await s.admin.advanceKyc({ order_id: second.orderId, action: 'finish' });
    const seq = receiver.received.filter((r) => r.path === '/cb2').map((r) => {
      const b = r.body as unknown as KycCallbackPayload;
      return `${b.event}/${b.first_name === '' ? 'no-data' : 'data'}`;
    });
    expect(seq).toEqual([
      'applicantPersonalInfoChanged/no-data',
      'applicantCreated/no-data',
      'applicantReviewed/no-data',
      'applicantPending/no-data',
      'applicantReviewed/data',
    ]);
    expect(s.admin.faults().counts.kycCallback).toEqual({ duplicate: 1, outOfOrder: 2 });
  });

  it('drops KYC callbacks: never posted, still listed by GET /responses; `times` limits it', async () => {
    const receiver = await startReceiver();
    onCleanup(() => receiver.stop());
    const s = await start({ faults: { kycCallback: { dropRate: 1, times: 2 } } });
    const { appId, orderId } = await kycOrder(s, `${receiver.url}/cb`);
    await s.admin.advanceKyc({ order_id: orderId, action: 'finish' });
    const events = (bodies: unknown[]) => bodies.map((b) => (b as KycCallbackPayload).event);
    expect(events(receiver.received.map((r) => r.body))).toEqual(['applicantPending', 'applicantReviewed', 'applicantReviewed']);
    const listed = await fetch(`${s.kycBaseUrl}/api/v1/responses?app_id=${appId}`).then((r) => r.json() as Promise<unknown[]>);
    expect(events(listed)).toEqual(['applicantCreated', 'applicantPersonalInfoChanged', 'applicantPending', 'applicantReviewed', 'applicantReviewed']);
    expect(s.admin.callbacks().filter((d) => d.dropped).map((d) => (d.body as KycCallbackPayload).event)).toEqual([
      'applicantCreated',
      'applicantPersonalInfoChanged',
    ]);
    expect(s.admin.faults().counts.kycCallback).toEqual({ drop: 2 });
  });

  it('duplicates order notifications and sends a stale PENDING one after the final one', async () => {
    const receiver = await startReceiver();
    onCleanup(() => receiver.stop());
    const s = await start({
      notificationUrl: `${receiver.url}/n`,
      faults: { orderNotification: { duplicateRate: 1, outOfOrderRate: 1, times: 2 } },
    });
    const { client, creds } = fixture(s);
    await client.payout(ghsPayout('nf-1'), creds);
    await expect.poll(() => receiver.received.length).toBe(3);
    const statuses = receiver.received.map((r) => (r.body as { data: { order_details: { status: string } } }).data.order_details.status);
    // The duplicate roll comes first for the final notification, then the stale one is sent once (times: 2).
    expect(statuses).toEqual(['COMPLETED', 'COMPLETED', 'PENDING']);
    expect(s.admin.faults().counts.orderNotification).toEqual({ outOfOrder: 1, duplicate: 1 });
  });
});

describe('admin HTTP API and reproducibility', () => {
  it('sets, reports and clears faults over HTTP, and serves the same ledger as the in-process handle', async () => {
    // Settling waits for a status check, so no settle timer can change the record between the two ledger reads.
    const s = await start({ progression: { settleAfterChecks: 1 } });
    const { client, creds } = fixture(s);
    const admin = (path: string, method = 'GET', body?: unknown) =>
      fetch(`${s.url}/__admin${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

    expect((await admin('/faults/payout', 'PUT', { errorRate: 1, times: 1 })).status).toBe(200);
    await expect(client.payout(ghsPayout('h-1'), creds)).rejects.toBeInstanceOf(ProviderAmbiguousError);
    const faults = (await (await admin('/faults')).json()) as { settings: unknown; counts: unknown };
    expect(faults).toEqual({ settings: { payout: { errorRate: 1, times: 1 } }, counts: { payout: { error: 1 } } });

    const bad = await admin('/faults/payuot', 'PUT', { errorRate: 1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string }).message).toMatch(/unknown fault operation "payuot"/);
    expect((await admin('/faults/payout', 'PUT', { errorRate: 2 })).status).toBe(400);

    await admin('/faults', 'DELETE');
    await client.payout(ghsPayout('h-1'), creds);
    expect(await (await admin('/ledger')).json()).toEqual(s.admin.ledger());

    const reset = await admin(`/partners/acme/reset-keys`, 'POST');
    expect(reset.status).toBe(200);
    await expect(client.payout(ghsPayout('h-2'), creds)).rejects.toBeInstanceOf(ProviderUnauthorizedError);
    expect((await admin('/nothing-here')).status).toBe(404);
  });

  it('replays a chaotic run exactly with the same seed', async () => {
    const run = async (seed: number) => {
      const s = await startSimulator({ log: 'silent', seed, faults: { payout: { errorRate: 0.5 } } });
      const f = payoutFixture(s);
      const pattern: string[] = [];
      for (let i = 0; i < 16; i += 1) {
        pattern.push(await f.client.payout(ghsPayout(`seed-${i}`), f.creds).then(() => 'ok', () => 'err'));
      }
      f.client.close();
      await s.stop();
      return pattern.join(',');
    };
    const first = await run(42);
    expect(await run(42)).toBe(first);
    expect(first).toContain('ok');
    expect(first).toContain('err');
    expect(await run(7)).not.toBe(first);
  });
});

/** A verified KYC app and one individual order with the given callback URL. */
async function kycOrder(s: SimulatorHandle, callback: string, existingApp?: string): Promise<{ appId: string; orderId: string }> {
  const post = async (path: string, body: unknown) =>
    (await fetch(`${s.kycBaseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<
      Record<string, unknown>
    >;
  let appId = existingApp;
  if (!appId) {
    const registered = (await post('/api/v1/app/register', { name: 'A', email: 'a@acme.test', origin: [] })) as { value: string; app: { _id: string } };
    await post('/api/v1/app/verify', { email: 'a@acme.test', code: registered.value });
    appId = registered.app._id;
  }
  const order = await post('/api/v1/order', {
    full_name: 'Kojo Antwi', email: 'kojo@example.test', phone: '0200000000', app: appId,
    kyc_type: '65a0c0ffee00000000000001', callback, redirect: '', reference: `ref-${callback}`,
  });
  return { appId, orderId: order._id as string };
}

describe('admin HTTP API: the rest of the surface', () => {
  it('creates partners, reads credentials and the outbox, adds accounts, sends notifications, settles and resets', async () => {
    const receiver = await startReceiver();
    onCleanup(() => receiver.stop());
    const s = await start({ progression: { settleAfterChecks: 5 } });
    const admin = async (path: string, method = 'GET', body?: unknown) => {
      const res = await fetch(`${s.url}/__admin${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> & unknown[] };
    };

    const created = await admin('/partners', 'POST', { partner_code: 'zed', email: 'zed@example.test', platform_merchant_id: 'MER-Z' });
    expect(created.body).toMatchObject({ platform_merchant_id: 'MER-Z', partner_id: expect.any(String) });
    expect((await admin('/partners', 'POST', { partner_code: 'zed' })).status).toBe(400);
    expect((await admin('/partners/zed/credentials?platform_merchant_id=MER-Z')).body).toEqual(created.body);
    expect((await admin('/partners/nobody/credentials')).status).toBe(404);

    expect((await admin('/accounts', 'POST', { account_code: 'MTN', account_number: '0551112222' })).status).toBe(400);
    expect((await admin('/accounts', 'POST', { account_code: 'MTN', account_number: '0551112222', account_name: 'Abena Ofori' })).status).toBe(200);
    expect((await admin('/accounts')).body).toContainEqual(expect.objectContaining({ account_name: 'Abena Ofori' }));

    expect((await admin('/notification-url', 'PUT', { url: 'not a url' })).status).toBe(400);
    expect((await admin('/notification-url', 'PUT', { url: `${receiver.url}/n`, partner_code: 'zed' })).status).toBe(200);

    const creds = credentialsFromSecret(created.body as never);
    const client = new PayoutServiceClient({ baseUrl: s.payoutBaseUrl });
    onCleanup(() => client.close());
    await client.payout({ ...ghsPayout('adm-1'), account_number: '0551112222' }, creds);
    const identity = { platform_merchant_id: 'MER-Z', currency: 'GHS', withdrawal_reference: 'adm-1' };

    const sent = await admin('/notifications', 'POST', identity);
    expect(sent.body).toEqual([expect.objectContaining({ status: 200, url: `${receiver.url}/n` })]);
    expect((receiver.received[0]?.body as { data: { order_details: { status: string } } }).data.order_details.status).toBe('PENDING');

    const settled = await admin('/ledger/settle', 'POST', { ...identity, outcome: 'failed' });
    expect(settled.body).toMatchObject({ executions: 1, status: 'FAILED' });
    await expect.poll(() => receiver.received.length).toBe(2);
    expect((await admin('/notifications')).body).toHaveLength(2);
    expect((await admin('/ledger/settle', 'POST', { ...identity, outcome: 'maybe' })).status).toBe(400);
    expect((await admin('/outbox?to=zed@example.test')).body).toEqual([]);
    expect((await admin('/collection-orders')).body).toEqual([]);
    expect((await admin('/callbacks')).body).toEqual([]);

    expect((await admin('/reset', 'POST')).body).toEqual({ reset: true });
    expect((await admin('/ledger')).body).toEqual([]);
    expect((await admin('/partners/zed/credentials')).status).toBe(404);
    expect((await admin('/accounts')).body).toContainEqual(expect.objectContaining({ account_name: 'Abena Ofori' }));
  });

  it('answers 400, not 500, for a path with a broken %-escape', async () => {
    const s = await start();
    const res = await fetch(`${s.kycBaseUrl}/api/v1/order/app/%E0%A4%A/user_reference/u/status`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: true, message: 'the path has an invalid %-escape', data: null });
  });
});
