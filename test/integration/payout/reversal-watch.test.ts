import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import { toItem } from '@shared/adapters/payout-item-store';
import { REVERSAL_WATCH_MARK_KEY } from '@shared/config/resources';
import { createProcessPayout } from '@shared/app/process-payout';
import { createReconciler, type ReconcileSettings } from '@shared/app/reconcile-payouts';
import { payoutKey } from '@shared/domain/identity';
import { Payout } from '@shared/domain/payout';
import { payoutRequestSchema, type PayoutRequestInput } from '@shared/messages/payout-request';
import type { PayoutProvider } from '@shared/ports/payouts';
import type { Clock } from '@shared/ports/runtime';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { noTelemetry, silentLog, testFingerprints } from '@test/factories/ports';
import { MERCHANT_ID, PARTNER_CODE, RECONCILE_SETTINGS, identityOf, request, startHarness, type Harness } from './harness';
import * as v from '@shared/validation/valibot';

/*
 * The reversal watch of SUCCEEDED payouts, which settling no longer schedules in the open index: the
 * reconciler finds each success in `by-state` a day, two days, ... seven days after its last change
 * and asks GetPayout, writing nothing while the money stays delivered. Real parts: the repository on
 * dynalite (its own stage, so the watch's watermark is this file's alone), the provider client
 * against the simulator over HTTP, and a clock the test moves.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let h: Harness;
let client: PayoutServiceClient;
let doc: DynamoDBDocumentClient;
/** The test's clock: every reconciler and worker of this file shares it, as the deployed functions share time. */
let t = Date.now();
const clock: Clock = { now: () => new Date(t) };
/** When GetPayout was asked about each withdrawal_reference (test-clock times). */
const asked = new Map<string, number[]>();
const timesAsked = (r: PayoutRequestInput): number => asked.get(r.withdrawal_reference)?.length ?? 0;
/** On which day after `since` each GetPayout about `r` came (1: the first day after it). */
const daysAsked = (r: PayoutRequestInput, since: number): number[] => (asked.get(r.withdrawal_reference) ?? []).map((at) => Math.floor((at - since) / DAY));
/** Minutes the clock moves on at each GetPayout (0: time stands still); the budget test uses it. */
let minutesPerCall = 0;

/** One payout at a time, two a page: the budget and paging tests count calls and pages. */
const SETTINGS: ReconcileSettings = { ...RECONCILE_SETTINGS, concurrency: 1, pageSize: 2 };

function system(settings: Partial<ReconcileSettings> = {}) {
  const credentials = credentialsFromCachedSecret({ get: async () => h.sim.admin.credentials(PARTNER_CODE, MERCHANT_ID) });
  const provider: PayoutProvider = {
    verifyAccount: (req, creds) => client.verifyAccount(req, creds),
    payout: (req, creds) => client.payout(req, creds),
    getPayout: (identity, creds) => {
      asked.set(identity.withdrawal_reference, [...(asked.get(identity.withdrawal_reference) ?? []), t]);
      t += minutesPerCall * MINUTE;
      return client.getPayout(identity, creds);
    },
  };
  const deps = { repository: h.repository, provider, credentials, clock, telemetry: noTelemetry, log: silentLog };
  const process = createProcessPayout({ ...deps, fingerprints: testFingerprints, settings: { nameMatchThreshold: 0.85, kycGating: false } });
  return { reconciler: createReconciler({ ...deps, settings: { ...SETTINGS, ...settings } }), pay: (r: PayoutRequestInput) => process(v.parse(payoutRequestSchema, r)) };
}

/** A payout the worker submits and the reconciler then finds delivered (SUCCEEDED at the current time). */
async function succeeded(s: ReturnType<typeof system>, r: PayoutRequestInput = request()): Promise<PayoutRequestInput> {
  await s.pay(r);
  h.sim.admin.settlePayout(identityOf(r), 'succeeded');
  t += 2 * MINUTE;
  await s.reconciler.sweep();
  expect((await h.repository.get(identityOf(r)))?.state).toBe('SUCCEEDED');
  asked.set(r.withdrawal_reference, []);
  return r;
}

const raw = async (r: PayoutRequestInput) =>
  (await doc.send(new GetCommand({ TableName: h.aws.names.payoutsTable, Key: { pk: payoutKey(identityOf(r)) }, ConsistentRead: true }))).Item;

beforeAll(async () => {
  h = await startHarness({ aws: { stage: 'revwatch' } });
  client = new PayoutServiceClient({ baseUrl: h.sim.payoutBaseUrl, timeoutMs: 800 });
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: h.aws.endpoints.dynamodb }), { marshallOptions: { removeUndefinedValues: true } });
  // The watch's first run starts its watermark: looks due from then on.
  await system().reconciler.sweep();
});
afterAll(async () => {
  client?.close();
  doc?.destroy();
  await h?.stop();
});

describe('the reversal watch of SUCCEEDED payouts, by age', () => {
  it('asks GetPayout a day, two days, ... seven days after the success, writing nothing; a success the previous release left under WATCH#<n> keeps its watch', async () => {
    const s = system();
    const r = await succeeded(s);
    // What the previous release stored on settling: a success with its next look a day on, in the open index.
    const old = await succeeded(s);
    const settledAt = t;
    const current = await h.repository.get(identityOf(old));
    const legacy = toItem(Payout.fromRecord({ ...(current as Payout).record, nextCheckAt: new Date(settledAt + DAY).toISOString() }));
    expect(legacy.openShard).toMatch(/^WATCH#\d$/);
    await doc.send(new PutCommand({ TableName: h.aws.names.payoutsTable, Item: legacy }));

    const settled = await raw(r);
    // Settling left the open index and wrote no watch entry; the by-state entry is what the watch reads.
    expect(settled).toMatchObject({ state: 'SUCCEEDED', listShard: expect.stringMatching(/^SUCCEEDED#\d$/) });
    expect(settled?.openShard).toBeUndefined();
    expect(settled?.nextCheckAt).toBeUndefined();

    // Sweeps every 11 hours for 9 days (the deployed schedule runs every minute; sparser here).
    while (t < settledAt + 9 * DAY) {
      t += 11 * HOUR;
      await s.reconciler.sweep();
    }
    expect(daysAsked(r, settledAt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Seven looks that found the money delivered wrote nothing at all.
    expect(await raw(r)).toEqual(settled);
    // The old success: day 1 the look the open index held (it then leaves the index), days 2 to 7 by age, then none.
    expect(daysAsked(old, settledAt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect((await raw(old))?.openShard).toBeUndefined();
  });

  it('catches a reversal at the next look, and catches up looks that sweeps missed, one GetPayout for the gap', async () => {
    const s = system();
    const r = await succeeded(s);
    // No sweep for three days and a bit (the reconciler was off): the next one looks once.
    t += 3 * DAY + MINUTE;
    const caughtUp = await s.reconciler.sweep();
    expect(caughtUp.watchRead).toBeGreaterThanOrEqual(1);
    expect(timesAsked(r)).toBe(1);

    await h.sim.admin.reversePayout(identityOf(r));
    t += DAY;
    const summary = await s.reconciler.sweep();
    expect(summary.transitions).toMatchObject({ REVERSED: 1 });
    const p = await h.repository.get(identityOf(r));
    expect(p?.state).toBe('REVERSED');
    expect(p?.record.history.at(-1)).toMatchObject({ from: 'SUCCEEDED', to: 'REVERSED', reason: 'provider reports REVERSED: the delivered money came back' });
    // REVERSED leaves by-state's SUCCEEDED shards: later sweeps never ask again.
    t += DAY;
    await s.reconciler.sweep();
    expect(timesAsked(r)).toBe(2);
  });

  it('a run out of budget stores where it stopped; the next runs carry on, and every success is asked once', async () => {
    const s = system();
    const refs: PayoutRequestInput[] = [];
    for (let i = 0; i < 5; i += 1) refs.push(await succeeded(s));
    t += DAY + MINUTE;
    // Each GetPayout takes 1 minute of the test clock, and a run may spend 2: a few looks per run.
    minutesPerCall = 1;
    const tight = system({ budgetMs: 2 * MINUTE });
    const runs: Array<{ budgetExhausted: boolean }> = [];
    try {
      for (let run = 0; run < 10 && refs.some((r) => timesAsked(r) === 0); run += 1) runs.push(await tight.reconciler.sweep());
    } finally {
      minutesPerCall = 0;
    }
    expect(runs.length).toBeGreaterThan(1);
    expect(runs[0]?.budgetExhausted).toBe(true);
    expect(refs.map(timesAsked)).toEqual([1, 1, 1, 1, 1]);
    const mark = (await doc.send(new GetCommand({ TableName: h.aws.names.payoutsTable, Key: { pk: REVERSAL_WATCH_MARK_KEY }, ConsistentRead: true }))).Item;
    expect(mark).toMatchObject({ coveredUntil: expect.any(String) });
  });
  it('a stored progress cursor the store does not take (another version wrote it) reads that age again instead of stopping the watch', async () => {
    const s = system();
    const refs: PayoutRequestInput[] = [];
    for (let i = 0; i < 6; i += 1) refs.push(await succeeded(s));
    t += DAY + MINUTE;
    const key = { pk: REVERSAL_WATCH_MARK_KEY };
    const readMark = async () => (await doc.send(new GetCommand({ TableName: h.aws.names.payoutsTable, Key: key, ConsistentRead: true }))).Item as { pendingCursor?: string };
    // Runs out of budget until one stops inside an age's pages (its progress then holds a cursor).
    minutesPerCall = 1;
    let mark = await readMark();
    try {
      for (let run = 0; run < 10 && mark.pendingCursor === undefined; run += 1) {
        await system({ budgetMs: MINUTE }).reconciler.sweep();
        mark = await readMark();
      }
    } finally {
      minutesPerCall = 0;
    }
    expect(mark.pendingCursor).toBeDefined();
    const forged = Buffer.from(JSON.stringify({ s: 0, k: { pk: 'x', listShard: 'SUCCEEDED#7', updatedAt: '2026-01-01T00:00:00.000Z' } })).toString('base64url');
    await doc.send(new PutCommand({ TableName: h.aws.names.payoutsTable, Item: { ...mark, ...key, pendingCursor: forged } }));
    await s.reconciler.sweep();
    expect(refs.map(timesAsked).every((n) => n >= 1)).toBe(true);
  });
});
