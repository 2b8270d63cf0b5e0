import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createKycApprovalReader, KycConfirmationUnavailableError, type KycApprovalReaderOptions } from '@shared/app/kyc-approval';
import { createEventStore } from '@shared/adapters/event-store';
import { SUBJECT_CALLBACKS_PAGES } from '@shared/app/apply-callback';
import { createKycRepository, subjectKey, type KycRepository } from '@shared/adapters/kyc-repository';
import { kycVerifier } from '@shared/adapters/kyc-verifier';
import { confirmPendingApprovals, type ConfirmKycDeps } from '@shared/app/confirm-kyc-approval';
import type { KycApproval } from '@shared/ports/payouts';
import type { StoredEvent } from '@shared/ports/callbacks';
import { isApprovalConfirmed, type KycSubject } from '@shared/domain/kyc-subject';
import { METRIC } from '@shared/observability/metric-names';
import { metrics } from '@shared/observability/metrics';
import { logger } from '@shared/observability/logger';
import { kycCallbackEvent } from '@test/factories/http-events';
import { bodyOf, CALLBACK_TOKEN, startReceiverStack, type ReceiverStack } from './receiver-stack';
import { noTelemetry, silentLog } from '@test/factories/ports';

let stack: ReceiverStack;
let subjects: KycRepository;
let confirmDeps: ConfirmKycDeps;
/** The gate's options besides the app id: the confirming deps and the stored callbacks it applies before a refusal. */
let gateDeps: Omit<KycApprovalReaderOptions, 'appId'>;
let gate: KycApproval;

beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'kyccb' });
  subjects = createKycRepository({ tableName: stack.local.names.kycTable, client: stack.doc });
  confirmDeps = {
    subjects,
    verifier: kycVerifier(stack.kycClient),
    clock: { now: () => new Date() },
    log: silentLog,
  };
  gateDeps = { ...confirmDeps, events: createEventStore({ tableName: stack.local.names.eventsTable, client: stack.doc }), telemetry: noTelemetry };
  gate = createKycApprovalReader({ ...gateDeps, appId: async () => stack.appId, pullTimeoutMs: 3000 });
});

afterAll(async () => {
  await stack?.stop();
});

/** The subject as the projection holds it once every callback stored so far is applied (the applier runs after the 200). */
async function subject(reference: string): Promise<KycSubject | undefined> {
  await stack.applyNow();
  return subjects.getSubject({ appId: stack.appId, userReference: reference });
}

/** The simulator's deliveries, then the applier's pass over them (what a second or so after the 200s looks like). */
async function advance(step: Parameters<ReceiverStack['sim']['admin']['advanceKyc']>[0]) {
  const deliveries = await stack.sim.admin.advanceKyc(step);
  await stack.applyNow();
  return deliveries;
}

/** A callback posted straight to the handler, then applied. */
async function post(event: ReturnType<typeof kycCallbackEvent>) {
  const result = await stack.kycCallback(event);
  await stack.applyNow();
  return result;
}

async function eventsFor(reference: string): Promise<Array<Record<string, unknown>>> {
  return (await stack.scan(stack.local.names.eventsTable)).filter((e) => e.userReference === reference);
}

/** A callback in the documented shape for direct handler invocations. */
function callback(reference: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    status: 'pending',
    event: 'applicantPending',
    order: 'order-x',
    timestamp: '2026-11-22T09:01:00.000Z',
    kyc_token: '',
    account: 'acc-x',
    user_reference: reference,
    meta_data: { kyc_note: 'User uploaded required documents', kyc_status: 'awaiting_approval' },
    first_name: '',
    last_name: '',
    phone: '',
    email: '',
    country: '',
    ...overrides,
  };
}

describe('KYC callbacks posted by the simulator', () => {
  it('stores the order, then plays the full sequence to approved, confirmed by pull', async () => {
    const orderId = await stack.order('user-approved');
    const stored = await stack.doc.send(new GetCommand({ TableName: stack.local.names.kycTable, Key: { pk: `ORDER#${orderId}` } }));
    expect(stored.Item).toMatchObject({ reference: 'user-approved', kind: 'individual', appId: stack.appId });
    expect(JSON.stringify(stored.Item)).not.toContain(CALLBACK_TOKEN);

    const deliveries = await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    expect(deliveries.map((d) => d.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await eventsFor('user-approved')).toHaveLength(5);

    const before = await subject('user-approved');
    expect(before).toMatchObject({ phase: 'completed', decision: 'approved', event: 'applicantReviewed', decisionChanged: false });
    expect(before?.profile).toMatchObject({ first_name: 'Ama', last_name: 'Mensah' });
    expect(before?.confirmedAt).toBeUndefined();
    const waiting = await stack.doc.send(
      new GetCommand({ TableName: stack.local.names.kycTable, Key: { pk: subjectKey({ appId: stack.appId, userReference: 'user-approved' }) } }),
    );
    expect(waiting.Item?.unconfirmedShard).toMatch(/^OPEN#\d$/);

    // The worker's gate pulls the verification-status endpoint before saying approved.
    expect(await gate.check('user-approved')).toBe('approved');
    const after = await subject('user-approved');
    expect(after?.confirmedAt).toBeDefined();
    expect(after?.lastPull).toMatchObject({ outcome: 'confirmed', providerStatus: 'approved' });
    const confirmed = await stack.doc.send(
      new GetCommand({ TableName: stack.local.names.kycTable, Key: { pk: subjectKey({ appId: stack.appId, userReference: 'user-approved' }) } }),
    );
    expect(confirmed.Item?.unconfirmedShard).toBeUndefined();
  });

  it('confirms waiting approvals in a sweep (what the reconciler or CLI runs)', async () => {
    const orderId = await stack.order('user-swept');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    const sweep = await confirmPendingApprovals(confirmDeps);
    expect(sweep.confirmed).toBeGreaterThanOrEqual(1);
    expect((await subject('user-swept'))?.confirmedAt).toBeDefined();
    expect(await subjects.unconfirmedApprovals(10)).not.toContainEqual({ appId: stack.appId, userReference: 'user-swept' });
  });

  it('acknowledges duplicated deliveries and applies them once', async () => {
    stack.sim.admin.setFaults('kycCallback', { duplicateRate: 1 });
    try {
      const orderId = await stack.order('user-dup');
      const deliveries = await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
      expect(deliveries).toHaveLength(10);
      expect(deliveries.every((d) => d.status === 200)).toBe(true);
    } finally {
      stack.sim.admin.clearFaults();
    }
    expect(await eventsFor('user-dup')).toHaveLength(5);
    const result = await subject('user-dup');
    expect(result).toMatchObject({ phase: 'completed', decision: 'approved' });
    // One write per distinct callback: a redelivery that is already reflected writes nothing.
    expect(result?.version).toBeLessThanOrEqual(5);
  });

  it('reads the KYC app id again when a subject is not found under the cached one (`secrets put kyc` a moment ago)', async () => {
    const orderId = await stack.order('user-new-app');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    const forced: boolean[] = [];
    // The cache still holds the app id of before the put; the secret itself holds the current one.
    const staleCache = createKycApprovalReader({
      ...gateDeps,
      appId: async (options) => {
        forced.push(options?.forceFetch === true);
        return options?.forceFetch ? stack.appId : 'app-before-the-put';
      },
    });
    expect(await staleCache.check('user-new-app')).toBe('approved');
    expect(forced).toEqual([false, true]);
    // A subject unknown under both ids is still "not approved", after the one fresh read.
    forced.length = 0;
    expect(await staleCache.check('user-never-seen')).toBe('not_approved');
    expect(forced).toEqual([false, true]);
  });

  it('ends in the same state when the simulator delivers callbacks out of order', async () => {
    stack.sim.admin.setFaults('kycCallback', { outOfOrderRate: 1 });
    try {
      const orderId = await stack.order('user-shuffled');
      for (let step = 0; step < 5; step += 1) await advance({ order_id: orderId, action: 'next', decision: 'approved' });
    } finally {
      stack.sim.admin.clearFaults();
    }
    expect(await eventsFor('user-shuffled')).toHaveLength(5);
    expect(await subject('user-shuffled')).toMatchObject({ phase: 'completed', decision: 'approved', event: 'applicantReviewed' });
    expect((await subject('user-shuffled'))?.profile).toMatchObject({ first_name: 'Ama' });
  });

  it('makes the gate throw, not answer "not approved", when the pull fails or is too slow', async () => {
    const orderId = await stack.order('user-slow-pull');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    const impatient = createKycApprovalReader({ ...gateDeps, appId: async () => stack.appId, pullTimeoutMs: 200 });
    stack.sim.admin.setFaults('kycVerificationStatus', { latencyMs: 1000 });
    try {
      await expect(impatient.check('user-slow-pull')).rejects.toBeInstanceOf(KycConfirmationUnavailableError);
      stack.sim.admin.setFaults('kycVerificationStatus', { errorRate: 1 });
      await expect(gate.check('user-slow-pull')).rejects.toBeInstanceOf(KycConfirmationUnavailableError);
      const sweep = await confirmPendingApprovals(confirmDeps);
      expect(sweep.failed).toBeGreaterThanOrEqual(1);
    } finally {
      stack.sim.admin.clearFaults();
    }
    // Once the endpoint answers again, the same approval is confirmed.
    expect(await gate.check('user-slow-pull')).toBe('approved');
  });

  it('reads every waiting callback before an approval, however early it was received, looks before a refusal, and waits (throws) when it cannot look', async () => {
    const orderId = await stack.order('user-gate-reads');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    const store = createEventStore({ tableName: stack.local.names.eventsTable, client: stack.doc });
    const calls: string[] = [];
    const reads: string[] = [];
    const events: KycApprovalReaderOptions['events'] = {
      listCallbacks: (query) => (calls.push('listCallbacks'), store.listCallbacks(query)),
      get: (eventId) => (calls.push('get'), reads.push(eventId), store.get(eventId)),
      markApplied: (eventId, at) => (calls.push('markApplied'), store.markApplied(eventId, at)),
      unapplied: (until) => (calls.push('unapplied'), store.unapplied(until)),
    };
    const reader = createKycApprovalReader({ ...gateDeps, events, appId: async () => stack.appId });
    // The first check confirms the approval by a pull; each check lists the user's callbacks once and
    // reads them, never the approval itself; none is waiting, nothing is applied.
    expect(await reader.check('user-gate-reads')).toBe('approved');
    expect(await reader.check('user-gate-reads')).toBe('approved');
    expect(calls.filter((c) => c === 'listCallbacks')).toHaveLength(2);
    expect(calls.filter((c) => c === 'markApplied')).toHaveLength(0);
    const approvalId = (await subject('user-gate-reads'))?.lastEventId;
    expect(reads).not.toContain(approvalId);
    // An undated rejection received an hour before the approval, stored and not applied (its apply
    // keeps failing): it outranks every dated approval, so the look must read it, wherever it sits.
    const journeyEvents = (await store.listCallbacks({ reference: 'user-gate-reads', source: 'kyc', limit: 25 })).events;
    const model = (await store.get(journeyEvents[0]?.eventId ?? '')) as StoredEvent;
    const { timestamp: _undated, ...rejection } = callback('user-gate-reads', { status: 'completed', event: 'applicantReviewed', meta_data: { kyc_note: 'Fraud', kyc_status: 'rejected' } });
    const early: StoredEvent = { ...model, eventId: 'kyc#undated-rejection-an-hour-before', body: JSON.stringify(rejection), receivedAt: new Date(Date.now() - 3_600_000).toISOString(), appliedAt: undefined };
    expect(await store.putOnce(early)).toBe('stored');
    expect(await reader.check('user-gate-reads')).toBe('not_approved');
    expect(reads).toContain(early.eventId);
    expect((await subjects.getSubject({ appId: stack.appId, userReference: 'user-gate-reads' }))?.decision).toBe('rejected');
    calls.length = 0;
    // A user with no callbacks at all: one Query of that user's callbacks, then "not approved".
    expect(await reader.check('user-gate-never-seen')).toBe('not_approved');
    expect(calls).toEqual(['listCallbacks']);
    // The stored callbacks cannot be read (here: no such table): "not yet", never a refusal.
    const blind = createKycApprovalReader({
      ...gateDeps,
      events: createEventStore({ tableName: `${stack.local.names.eventsTable}-missing`, client: stack.doc }),
      appId: async () => stack.appId,
    });
    await expect(blind.check('user-gate-never-seen')).rejects.toThrow(/stored KYC callbacks could not be applied: ResourceNotFoundException/);
    // Whatever the subject says, the look comes before the answer: not looked, not answered.
    await expect(blind.check('user-gate-reads')).rejects.toBeInstanceOf(KycConfirmationUnavailableError);
  });

  it('refuses a confirmed approval once a later rejection is stored, before the applier has applied it', async () => {
    const orderId = await stack.order('user-late-rejection');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    expect(await gate.check('user-late-rejection')).toBe('approved');
    expect(isApprovalConfirmed((await subject('user-late-rejection')) as KycSubject)).toBe(true);
    // Stored and acknowledged (200), not applied: the applier is failing, say.
    const rejection = callback('user-late-rejection', {
      status: 'completed',
      event: 'applicantReviewed',
      timestamp: new Date(Date.now() + 1000).toISOString(),
      meta_data: { kyc_note: 'Fraud suspected', kyc_status: 'rejected' },
    });
    expect((await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, rejection))).statusCode).toBe(200);
    expect((await subjects.getSubject({ appId: stack.appId, userReference: 'user-late-rejection' }))?.decision).toBe('approved');
    expect(await gate.check('user-late-rejection')).toBe('not_approved');
    expect((await subjects.getSubject({ appId: stack.appId, userReference: 'user-late-rejection' }))?.decision).toBe('rejected');
  });

  it('waits (throws), never answers, when a flood of unrecognized callbacks fills every page the look may read', async () => {
    const user = 'user-flooded';
    const orderId = await stack.order(user);
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    expect(await gate.check(user)).toBe('approved');
    const store = createEventStore({ tableName: stack.local.names.eventsTable, client: stack.doc });
    let queries = 0;
    // An endless listing of unrecognized callbacks of the user (what a hostile flood looks like to the look).
    const flooded: KycApprovalReaderOptions['events'] = {
      ...store,
      listCallbacks: async (query) => {
        queries += 1;
        const events = Array.from({ length: query.limit ?? 25 }, (_, n) => ({
          eventId: `kyc#flood-${queries}-${n}`,
          source: 'kyc' as const,
          receivedAt: new Date().toISOString(),
          recognized: false,
          unrecognizedReason: 'unknown kyc_status "on_hold"',
          userReference: user,
        }));
        return { events, cursor: `page-${queries}` };
      },
      get: store.get.bind(store),
      markApplied: store.markApplied.bind(store),
      unapplied: store.unapplied.bind(store),
    };
    const reader = createKycApprovalReader({ ...gateDeps, events: flooded, appId: async () => stack.appId });
    await expect(reader.check(user)).rejects.toThrow(/stored KYC callbacks could not be applied: SubjectCallbacksUnreadError/);
    await expect(reader.check(user)).rejects.toBeInstanceOf(KycConfirmationUnavailableError);
    expect(queries).toBe(2 * SUBJECT_CALLBACKS_PAGES);
  });

  it('makes the gate wait (throw) while the status endpoint lags an approval, and refuse a rejected or contradicted one', async () => {
    const orderId = await stack.order('user-lagging');
    for (let step = 0; step < 3; step += 1) await advance({ order_id: orderId, action: 'next' });
    // An approval callback ahead of the provider's own status (still pending there).
    const early = callback('user-lagging', {
      status: 'completed',
      event: 'applicantReviewed',
      timestamp: new Date().toISOString(),
      meta_data: { kyc_note: 'Verification complete', kyc_status: 'approved' },
    });
    expect((await post(kycCallbackEvent(CALLBACK_TOKEN, early))).statusCode).toBe(200);
    await expect(gate.check('user-lagging')).rejects.toBeInstanceOf(KycConfirmationUnavailableError);
    expect((await subject('user-lagging'))?.lastPull).toMatchObject({ outcome: 'not_yet', providerStatus: 'pending' });

    await advance({ order_id: orderId, action: 'finish', decision: 'rejected' });
    // The provider's rejected callbacks are later than the early approval: the subject is rejected now.
    expect(await gate.check('user-lagging')).toBe('not_approved');

    // An approval the provider contradicts (its status says rejected) is never approved. It is dated a
    // moment after the rejection (a time far in the future would not be believed: it counts as undated).
    const contradicted = { ...early, timestamp: new Date(Date.now() + 2000).toISOString(), order: 'order-y' };
    expect((await post(kycCallbackEvent(CALLBACK_TOKEN, contradicted))).statusCode).toBe(200);
    expect((await subject('user-lagging'))?.decision).toBe('approved');
    expect(await gate.check('user-lagging')).toBe('not_approved');
    expect((await subject('user-lagging'))?.lastPull).toMatchObject({ outcome: 'contradicted', providerStatus: 'rejected' });
  });

  it('ignores a pending callback that arrives after completed (no regression)', async () => {
    const orderId = await stack.order('user-late');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    const done = await subject('user-late');
    const late = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, callback('user-late', { timestamp: new Date().toISOString() })));
    expect(late.statusCode).toBe(200);
    const after = await subject('user-late');
    expect(after?.phase).toBe('completed');
    expect(after?.version).toBe(done?.version);
  });

  it('records a rejection with its note at once, and the gate says not approved without a pull', async () => {
    const orderId = await stack.order('user-rejected');
    await advance({ order_id: orderId, action: 'finish', decision: 'rejected' });
    expect(await subject('user-rejected')).toMatchObject({ decision: 'rejected', note: expect.stringContaining('rejected') });
    expect(await gate.check('user-rejected')).toBe('not_approved');
    expect((await subject('user-rejected'))?.lastPull).toBeUndefined();
  });

  it('applies an approval later changed to rejected, and flags it', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const count = vi.spyOn(metrics, 'addMetric');
    const orderId = await stack.order('user-changed');
    await advance({ order_id: orderId, action: 'finish', decision: 'approved' });
    expect(await gate.check('user-changed')).toBe('approved');
    await advance({ order_id: orderId, action: 'change-decision', decision: 'rejected' });
    const changed = await subject('user-changed');
    expect(changed).toMatchObject({ decision: 'rejected', decisionChanged: true, finalDecisionsSeen: ['approved', 'rejected'] });
    expect(changed?.confirmedAt).toBeUndefined();
    expect(await gate.check('user-changed')).toBe('not_approved');
    expect(count).toHaveBeenCalledWith(METRIC.kycDecisionChanged, 'Count', 1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('decision changed'), expect.objectContaining({ userReference: 'user-changed' }));
    warn.mockRestore();
    count.mockRestore();
  });
});

describe('KYC callback route refusals', () => {
  it('answers a forged token 401, stores nothing, counts it and logs why', async () => {
    const warn = vi.spyOn(logger, 'warn');
    const count = vi.spyOn(metrics, 'addMetric');
    const before = (await stack.scan(stack.local.names.eventsTable)).length;
    const result = await stack.kycCallback(kycCallbackEvent('forged-token-0123456789abcdef', callback('user-forged')));
    expect(result.statusCode).toBe(401);
    expect(bodyOf(result)).toEqual({ error: 'unauthorized', message: 'unauthorized' });
    expect((await stack.scan(stack.local.names.eventsTable)).length).toBe(before);
    expect(await subject('user-forged')).toBeUndefined();
    expect(count).toHaveBeenCalledWith(METRIC.webhookUnauthorized, 'Count', 1);
    expect(warn).toHaveBeenCalledWith('webhook refused', expect.objectContaining({ statusCode: 401, check: 'token' }));
    expect(JSON.stringify(warn.mock.calls)).not.toContain(CALLBACK_TOKEN);
    warn.mockRestore();
    count.mockRestore();
  });

  it('answers 401 when the path has no token', async () => {
    const event = kycCallbackEvent('', callback('user-none'));
    delete event.pathParameters;
    expect((await stack.kycCallback(event)).statusCode).toBe(401);
  });

  it('answers an oversized body 413, malformed JSON 400 with the reason, a non-JSON content type 415', async () => {
    const before = (await stack.scan(stack.local.names.eventsTable)).length;
    const huge = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, callback('user-big', { pad: 'x'.repeat(300_000) })));
    expect(huge.statusCode).toBe(413);
    const malformed = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, '{"status": "init",'));
    expect(malformed.statusCode).toBe(400);
    expect(bodyOf(malformed)).toMatchObject({ error: 'malformed_json', message: expect.stringContaining('not valid JSON') });
    const text = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, 'status=init', { headers: { 'content-type': 'text/plain' } }));
    expect(text.statusCode).toBe(415);
    expect((await stack.scan(stack.local.names.eventsTable)).length).toBe(before);
  });

  it('accepts a base64-encoded JSON body and a JSON content type with a charset', async () => {
    const result = await stack.kycCallback(
      kycCallbackEvent(CALLBACK_TOKEN, callback('user-b64'), { isBase64Encoded: true, headers: { 'content-type': 'application/json; charset=utf-8' } }),
    );
    expect(result.statusCode).toBe(200);
    expect((await subject('user-b64'))?.phase).toBe('pending');
  });

  it('stores an authentic but unrecognized payload verbatim, flags and counts it, and answers 200', async () => {
    const count = vi.spyOn(metrics, 'addMetric');
    const raw = '{"event":"applicantOnHold","status":"on_hold","user_reference":"user-odd","extra":{"a":1}}';
    const result = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, raw));
    expect(result.statusCode).toBe(200);
    const stored = (await stack.scan(stack.local.names.eventsTable)).find((e) => e.body === raw);
    expect(stored).toMatchObject({ source: 'kyc', recognized: false, unrecognizedReason: expect.stringContaining('on_hold') });
    expect(typeof stored?.expiresAt).toBe('number');
    expect(await subject('user-odd')).toBeUndefined();
    expect(count).toHaveBeenCalledWith(METRIC.webhookUnrecognized, 'Count', 1);
    count.mockRestore();
    // The same payload again is a duplicate: acknowledged, not stored or counted twice.
    const again = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, raw));
    expect(bodyOf(again)).toMatchObject({ duplicate: true });
  });

  it('never answers 5xx to merely wrong input', async () => {
    const inputs = [
      kycCallbackEvent(CALLBACK_TOKEN, '[]'),
      kycCallbackEvent(CALLBACK_TOKEN, 'null'),
      kycCallbackEvent(CALLBACK_TOKEN, '"text"'),
      kycCallbackEvent(CALLBACK_TOKEN, ''),
      kycCallbackEvent(CALLBACK_TOKEN, '{}'),
      kycCallbackEvent(CALLBACK_TOKEN, callback('u', { meta_data: 'x', timestamp: 12 })),
      kycCallbackEvent(CALLBACK_TOKEN, '\u0000\u0001'),
      kycCallbackEvent(CALLBACK_TOKEN, '{}', { headers: {} }),
      kycCallbackEvent('x'.repeat(5000), '{}'),
      kycCallbackEvent(CALLBACK_TOKEN, `${'['.repeat(50_000)}${']'.repeat(50_000)}`),
      kycCallbackEvent(CALLBACK_TOKEN, callback('u'.repeat(2100))),
      kycCallbackEvent(CALLBACK_TOKEN, callback('u-long-status', { status: 's'.repeat(200_000) })),
    ];
    for (const event of inputs) {
      const result = await stack.kycCallback(event);
      expect(result.statusCode).toBeLessThan(500);
      expect(result.body).not.toMatch(/at .*\.ts:\d+/);
    }
  });
});
