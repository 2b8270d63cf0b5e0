import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { createCollectionRepository } from '@shared/adapters/collection-repository';
import { createEventStore } from '@shared/adapters/event-store';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { applyCallbackBatch, applyStoredCallback, sweepUnappliedCallbacks, type ApplyCallbackDeps } from '@shared/app/apply-callback';
import { receiveKycCallback, type ReceiveKycCallbackDeps } from '@shared/app/receive-kyc-callback';
import { refreshable } from '@shared/adapters/refreshable-secret';
import { dedupeKey } from '@shared/domain/callbacks';
import { METRIC } from '@shared/observability/metric-names';
import type { StoredEvent } from '@shared/ports/callbacks';
import { loadFunction } from '@local/lambda';
import { startCallbackApplier } from '@local/scheduler';
import { FUNCTIONS, LOCAL_APPLY_IDLE_MAX_MS } from '@shared/config/functions';
import { useLocalAws } from '@test/support/local-aws';
import { lambdaContext } from '@test/factories/http-events';
import { countingTelemetry, MovableClock, silentLog } from '@test/factories/ports';

const TOKEN = 'applier-callback-token-0123456789';
const APP = 'app-applier';
const local = useLocalAws({ stage: 'applier' });

let doc: DynamoDBDocumentClient;
const clock = new MovableClock(new Date('2026-11-23T10:00:00.000Z'));
let telemetry: ReturnType<typeof countingTelemetry>;
let receiveDeps: ReceiveKycCallbackDeps;
let deps: ApplyCallbackDeps;

beforeAll(() => {
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), { marshallOptions: { removeUndefinedValues: true } });
  telemetry = countingTelemetry();
  const events = createEventStore({ tableName: local().names.eventsTable, client: doc });
  receiveDeps = {
    events,
    secret: refreshable({ get: async () => ({ app_id: APP, callback_token: TOKEN }) }, clock),
    retentionDays: 90,
    clock,
    log: silentLog,
    telemetry,
  };
  deps = {
    events,
    subjects: createKycRepository({ tableName: local().names.kycTable, client: doc }),
    payouts: createPayoutRepository(local().names.payoutsTable, doc),
    collections: createCollectionRepository({ tableName: local().names.collectionsTable, client: doc }),
    clock,
    log: silentLog,
    telemetry,
  };
});

function callback(user: string, status: string, kycStatus: string, minute: number): Record<string, unknown> {
  return {
    status,
    event: status === 'completed' ? 'applicantReviewed' : 'applicantPending',
    order: `order-${user}`,
    timestamp: new Date(Date.UTC(2026, 10, 23, 9, minute)).toISOString(),
    user_reference: user,
    meta_data: { kyc_note: `${status} ${kycStatus}`, kyc_status: kycStatus },
  };
}

/** Stores a callback the way the receiver does (and nothing else), returning its event id. */
async function store(payload: Record<string, unknown> | string): Promise<string> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return (await receiveKycCallback(receiveDeps, { token: TOKEN, body, payload: JSON.parse(body) })).eventId;
}

const stored = async (eventId: string): Promise<StoredEvent> => (await deps.events.get(eventId)) as StoredEvent;
const item = async (eventId: string) => (await doc.send(new GetCommand({ TableName: local().names.eventsTable, Key: { pk: eventId } }))).Item;
const subject = (user: string) => deps.subjects.getSubject({ appId: APP, userReference: user });
const sweep = (graceMs = 0) => sweepUnappliedCallbacks(deps, { graceMs, lateAfterMs: 5 * 60_000, budgetMs: 60_000 });

/** Everything the not-yet-applied index lists, across its shards. */
async function waiting(): Promise<string[]> {
  const ids: string[] = [];
  for await (const entry of deps.events.unapplied(new Date('2099-01-01T00:00:00.000Z'))) ids.push(entry.eventId);
  return ids;
}

describe('the callback applier', () => {
  it('leaves a stored callback unapplied and listed until it runs, then applies it once and records it', async () => {
    const eventId = await store(callback('a-1', 'pending', 'awaiting_approval', 1));
    expect(await subject('a-1')).toBeUndefined();
    expect(await item(eventId)).toMatchObject({ applyShard: expect.stringMatching(/^APPLY#[0-7]$/) });
    expect(await waiting()).toContain(eventId);

    clock.advance(1500);
    expect(await applyStoredCallback(deps, await stored(eventId))).toBe('applied');
    expect(await subject('a-1')).toMatchObject({ phase: 'pending', decision: 'awaiting_approval' });
    const after = await item(eventId);
    expect(after).toMatchObject({ appliedAt: clock.now().toISOString() });
    expect(after?.applyShard).toBeUndefined();
    expect(await waiting()).not.toContain(eventId);
    expect(telemetry.timings[METRIC.callbackApplyLagSeconds]?.at(-1)).toBe(1.5);
  });

  it('has the effect of applying once when it applies the same event twice, even from a stale copy', async () => {
    const eventId = await store(callback('a-2', 'completed', 'approved', 2));
    const copy = await stored(eventId);
    expect(await applyStoredCallback(deps, copy)).toBe('applied');
    const once = await subject('a-2');
    // A second stream delivery of the same insert carries the image from before the apply.
    expect(await applyStoredCallback(deps, copy)).toBe('unchanged');
    // The recorded event is not applied again at all.
    expect(await applyStoredCallback(deps, await stored(eventId))).toBe('already-applied');
    expect(await subject('a-2')).toEqual(once);
  });

  it('keeps order per subject whatever order the events are applied in (the rank guard)', async () => {
    const completed = await store(callback('a-3', 'completed', 'approved', 5));
    const pending = await store(callback('a-3', 'pending', 'awaiting_approval', 3));
    // The later event applied first, the earlier one after it: the earlier one changes nothing.
    expect(await applyStoredCallback(deps, await stored(completed))).toBe('applied');
    expect(await applyStoredCallback(deps, await stored(pending))).toBe('unchanged');
    expect(await subject('a-3')).toMatchObject({ phase: 'completed', decision: 'approved' });
    expect(await item(pending)).toMatchObject({ appliedAt: expect.any(String) });
  });

  it('never applies an unrecognized event, which never waits in the index', async () => {
    const eventId = await store('{"status":"on_hold","user_reference":"a-4"}');
    expect(await item(eventId)).toMatchObject({ recognized: false });
    expect((await item(eventId))?.applyShard).toBeUndefined();
    expect(await applyStoredCallback(deps, await stored(eventId))).toBe('not-applied');
    expect(await subject('a-4')).toBeUndefined();
    expect((await item(eventId))?.appliedAt).toBeUndefined();
  });

  it('sweeps everything stored and left unapplied, counts what waited too long, and leaves the young to the stream', async () => {
    await sweep();
    const old = await store(callback('a-5', 'pending', 'awaiting_approval', 1));
    clock.advance(10 * 60_000);
    const young = await store(callback('a-6', 'pending', 'awaiting_approval', 1));
    const lateBefore = telemetry.counts[METRIC.callbacksAppliedLate] ?? 0;

    // With a grace of a minute, only the 10-minute-old event is the sweep's.
    expect(await sweep(60_000)).toMatchObject({ found: 1, applied: 1, late: 1, failed: 0 });
    expect(telemetry.counts[METRIC.callbacksAppliedLate]).toBe(lateBefore + 1);
    expect(await waiting()).toEqual([young]);
    expect(await subject('a-5')).toMatchObject({ phase: 'pending' });

    expect(await sweep()).toMatchObject({ found: 1, applied: 1, late: 0 });
    expect(await waiting()).toEqual([]);
    expect(await sweep()).toMatchObject({ found: 0 });
    expect(await item(old)).toMatchObject({ appliedAt: expect.any(String) });
  });

  it('stops at the first failure of a stream batch and reports it, so the stream retries from there', async () => {
    const first = await stored(await store(callback('a-7', 'pending', 'awaiting_approval', 1)));
    const second = await stored(await store(callback('a-8', 'pending', 'awaiting_approval', 1)));
    const third = await stored(await store(callback('a-9', 'pending', 'awaiting_approval', 1)));
    const failing: ApplyCallbackDeps = {
      ...deps,
      subjects: {
        ...deps.subjects,
        getSubject: async (ref) => {
          if (ref.userReference === 'a-8') throw new Error('throttled');
          return deps.subjects.getSubject(ref);
        },
      },
    };
    const batch = [first, second, third].map((event, n) => ({ id: `seq-${n}`, event }));
    expect(await applyCallbackBatch(failing, batch)).toBe('seq-1');
    expect(await subject('a-7')).toMatchObject({ phase: 'pending' });
    expect(await subject('a-9')).toBeUndefined();
    // The failed and the untried ones stay listed for the retry and the sweep.
    expect(await waiting()).toEqual(expect.arrayContaining([second.eventId, third.eventId]));
    expect(await applyCallbackBatch(deps, batch.slice(1))).toBeUndefined();
    expect(await waiting()).toEqual([]);
  });
});

describe('the callback applier function', () => {
  it('applies the inserts of a DynamoDB stream batch from their NewImage, and sweeps on a schedule', async () => {
    const { handler } = (await import('@functions/callback-applier')) as unknown as {
      handler: (event: unknown, context: ReturnType<typeof lambdaContext>) => Promise<DynamoDBBatchResponse & { found?: number }>;
    };
    const payload = callback('f-1', 'completed', 'approved', 7);
    const eventId = await store(payload);
    const image = (await item(eventId)) as Record<string, unknown>;
    const record = (eventName: 'INSERT' | 'REMOVE', n: number) => ({
      eventID: `e-${n}`,
      eventName,
      eventSource: 'aws:dynamodb',
      dynamodb: { Keys: marshall({ pk: eventId }), NewImage: eventName === 'INSERT' ? marshall(image) : undefined, SequenceNumber: `${n}`, StreamViewType: 'NEW_IMAGE' },
    });
    // A TTL deletion in the same batch is ignored (the deployed filter keeps them out anyway).
    const streamEvent = { Records: [record('REMOVE', 1), record('INSERT', 2)] } as unknown as DynamoDBStreamEvent;
    expect(await handler(streamEvent, lambdaContext('callback-applier'))).toEqual({ batchItemFailures: [] });
    expect(await subject('f-1')).toMatchObject({ phase: 'completed', decision: 'approved' });
    expect(await item(eventId)).toMatchObject({ appliedAt: expect.any(String) });
    expect(dedupeKey('kyc', payload)).toBe(eventId);

    // The schedule: a sweep of whatever the stream left (this event is hours old by the real clock).
    const other = await store(callback('f-2', 'pending', 'awaiting_approval', 7));
    const scheduled = { 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} };
    expect(await handler(scheduled, lambdaContext('callback-applier'))).toMatchObject({ found: 1, applied: 1, failed: 0 });
    expect(await waiting()).toEqual([]);
    expect(await item(other)).toMatchObject({ appliedAt: expect.any(String) });
  });
});

describe('the local driver of the applier (npm start, startCallbackApplier)', () => {
  it('still applies a callback stored with no nudge while its sweep is backed off (nothing stored is lost)', async () => {
    const fn = await loadFunction(FUNCTIONS.callbackApplier, { stage: 'applier', region: local().env.AWS_REGION as string });
    const applier = startCallbackApplier({ fn, region: local().env.AWS_REGION as string });
    try {
      // Idle sweeps: the wait grows from LOCAL_APPLY_EVERY_MS towards LOCAL_APPLY_IDLE_MAX_MS.
      await new Promise((r) => setTimeout(r, 1000));
      const idleRuns = applier.stats.runs;
      // About 3 sweeps (at 100, 300 and 700 ms); a fixed LOCAL_APPLY_EVERY_MS schedule would sweep about 9 times.
      expect(idleRuns).toBeLessThanOrEqual(5);
      // Stored as another process would (the CLI, a crashed gateway): nobody nudges the driver.
      const eventId = await store(callback('d-1', 'pending', 'awaiting_approval', 8));
      const storedAt = Date.now();
      while ((await item(eventId))?.appliedAt === undefined && Date.now() - storedAt < 3 * LOCAL_APPLY_IDLE_MAX_MS) await new Promise((r) => setTimeout(r, 50));
      expect(await item(eventId)).toMatchObject({ appliedAt: expect.any(String) });
      expect(await subject('d-1')).toMatchObject({ phase: 'pending', decision: 'awaiting_approval' });
      expect(applier.stats.errors).toBe(0);
    } finally {
      await applier.stop();
    }
  });
});
