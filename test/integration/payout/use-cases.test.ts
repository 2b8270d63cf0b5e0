import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RetryLaterError, createProcessPayout, type ProcessPayoutSettings } from '@shared/app/process-payout';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import type { KycApproval, PayoutProvider, PayoutRepository } from '@shared/ports/payouts';
import { createReconciler, type ReconcileSettings } from '@shared/app/reconcile-payouts';
import { retryPayout } from '@shared/app/retry-payout';
import { payoutCheck } from '@shared/messages/payout-check';
import { Payout } from '@shared/domain/payout';
import { maskAccount } from '@shared/domain/account';
import { payoutRequestSchema, type PayoutRequestInput } from '@shared/messages/payout-request';
import { METRIC } from '@shared/observability/metric-names';
import { PayoutServiceClient, credentialsFromSecret } from '@shared/providers/payout-client';
import { mapProviderStatus } from '@shared/providers/status-map';
import { MERCHANT_ID, PARTNER_CODE, RECONCILE_SETTINGS, expectAtMostOneExecution, identityOf, ledgerOf, request, startHarness, type Harness } from './harness';
import { MovableClock, countingTelemetry, silentLog, storedNotifications, testFingerprints } from '@test/factories/ports';
import { SimulatedCrash, installCrashInjector } from '@test/chaos/crash-injector';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import * as v from '@shared/validation/valibot';

/*
 * The use cases built with explicit dependencies: the real repository on dynalite and the real
 * provider client against the simulator, but a clock the test moves, so grace periods, review
 * deadlines and back-off are exercised without waiting.
 */

const MINUTE = 60_000;
let h: Harness;
let client: PayoutServiceClient;
let unreachable: PayoutServiceClient;

const telemetry = countingTelemetry();
const counts = telemetry.counts;

function system(
  options: {
    provider?: PayoutProvider;
    kyc?: KycApproval;
    worker?: Partial<ProcessPayoutSettings>;
    reconcile?: Partial<ReconcileSettings>;
    /** What the reconciler asks GetPayout through (default: the simulator). */
    reads?: PayoutProvider;
    /** Default: the harness's repository on dynalite. */
    repository?: PayoutRepository;
  } = {},
) {
  const clock = new MovableClock();
  const credentials = credentialsFromCachedSecret({ get: async () => h.sim.admin.credentials(PARTNER_CODE, MERCHANT_ID) });
  const common = { repository: options.repository ?? h.repository, credentials, clock, telemetry, log: silentLog };
  const process = createProcessPayout({
    ...common,
    fingerprints: testFingerprints,
    provider: options.provider ?? client,
    kyc: options.kyc,
    settings: { nameMatchThreshold: 0.85, kycGating: false, ...options.worker },
  });
  const reconciler = createReconciler({ ...common, provider: options.reads ?? client, settings: { ...RECONCILE_SETTINGS, ...options.reconcile } });
  const parse = (r: PayoutRequestInput) => v.parse(payoutRequestSchema, r);
  return {
    clock,
    pay: (r: PayoutRequestInput) => process(parse(r)),
    reconcile: (budgetMs?: number) => reconciler.sweep(budgetMs === undefined ? {} : { budgetMs }),
    /** A message of the checks queue for the payout of `r` at `version` (the payout checker's use case). */
    check: (r: PayoutRequestInput, version: number) => reconciler.check(payoutCheck(identityOf(r), version)),
  };
}

const payoutOf = (r: PayoutRequestInput) => h.repository.get(identityOf(r));

/** The simulator for AccountVerification and GetPayout; the Payout call goes to a port nothing listens on, so it is never sent. */
const payoutNeverSent: PayoutProvider = {
  verifyAccount: (input, creds) => client.verifyAccount(input, creds),
  getPayout: (identity, creds) => client.getPayout(identity, creds),
  payout: (input, creds) => unreachable.payout(input, creds),
};

/** Stores `r` as a payout just accepted at `at` (the worker's first write), for a test to move on by hand. */
async function storeAccepted(r: PayoutRequestInput, amount: string, at: Date): Promise<Payout> {
  const accepted = Payout.accept(
    { identity: identityOf(r), amount, accountMasked: maskAccount(r.account_number), accountCode: 'MTN', expectedName: r.expected_name },
    at,
  );
  await h.repository.createAccepted(accepted);
  return accepted;
}

/** A Payout call for `r` that payrelay did not make (a worker that crashed after it, an earlier deployment, a person). */
async function payOutsidePayrelay(r: PayoutRequestInput, amount = r.amount): Promise<void> {
  const creds = credentialsFromSecret(h.sim.admin.credentials(PARTNER_CODE, MERCHANT_ID));
  await client.payout({ ...identityOf(r), amount, account_number: r.account_number, account_code: r.account_code }, creds);
}

beforeAll(async () => {
  h = await startHarness();
  client = new PayoutServiceClient({ baseUrl: h.sim.payoutBaseUrl, timeoutMs: 800 });
  // A port nothing listens on: connection refused, so the client reports "unavailable" (nothing sent).
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  unreachable = new PayoutServiceClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 800 });
});
afterAll(async () => {
  client?.close();
  unreachable?.close();
  await h?.stop();
});
afterEach(() => {
  expectAtMostOneExecution(h.sim);
  h.sim.admin.clearFaults();
});

/**
 * A provider call held until the test lets it go on: the call awaits `hold()`, `reached` resolves
 * once it is waiting there, `release()` lets it continue.
 */
interface HeldCall {
  hold(): Promise<void>;
  reached: Promise<void>;
  release(): void;
}

function heldCall(): HeldCall {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let reach: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  return {
    hold: () => {
      reach();
      return gate;
    },
    reached,
    release: () => release(),
  };
}

/** The simulator's provider, with AccountVerification and Payout each held (heldCall) when given. */
function heldProvider(held: { verifyAccount?: HeldCall; payout?: HeldCall }): PayoutProvider {
  return {
    verifyAccount: async (input, creds) => {
      await held.verifyAccount?.hold();
      return client.verifyAccount(input, creds);
    },
    getPayout: (identity, creds) => client.getPayout(identity, creds),
    payout: async (input, creds) => {
      await held.payout?.hold();
      return client.payout(input, creds);
    },
  };
}

/** Waits until the payout of `r` is stored (the worker's create has landed). */
async function stored(r: PayoutRequestInput): Promise<Payout> {
  for (let i = 0; i < 200; i++) {
    const p = await payoutOf(r);
    if (p) return p;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`payout ${r.withdrawal_reference} never stored`);
}

/** The simulator answers 5xx before committing: our side sees an ambiguous outcome the provider never executed. */
async function unknownToProvider(s: ReturnType<typeof system>, r: PayoutRequestInput) {
  h.sim.admin.setFaults('payout', { errorRate: 1, times: 1 });
  expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
  h.sim.admin.clearFaults();
}

describe('reconciliation rules (rule 1 not-found handling, rule 3 nothing lost)', () => {
  it('hands an UNKNOWN payout the provider does not know to NEEDS_REVIEW after the grace period (default)', async () => {
    const s = system();
    const r = request();
    await unknownToProvider(s, r);
    const before = counts[METRIC.payoutNeedsReview] ?? 0;
    s.clock.advance(1 * MINUTE);
    await s.reconcile();
    const first = await payoutOf(r);
    expect(first?.state).toBe('UNKNOWN');
    expect(first?.record.notFoundSince).toBe(s.clock.now().toISOString());
    s.clock.advance(10 * MINUTE);
    await s.reconcile();
    const within = await payoutOf(r);
    expect(within?.state).toBe('UNKNOWN');
    // The next scheduled look comes after the grace period (15 minutes) has passed.
    s.clock.advance(Date.parse(within?.record.nextCheckAt ?? '') - s.clock.now().getTime());
    expect(within?.notFoundForMs(s.clock.now())).toBeGreaterThanOrEqual(15 * MINUTE);
    await s.reconcile();
    const last = await payoutOf(r);
    expect(last?.state).toBe('NEEDS_REVIEW');
    expect(last?.record.reason).toMatch(/does not know this withdrawal_reference.*resubmission disabled/);
    expect(counts[METRIC.payoutNeedsReview]).toBe(before + 1);
    expect(ledgerOf(h.sim, r.withdrawal_reference)?.executions ?? 0).toBe(0);
    // A late redelivery of the message never pays a payout handed to a person.
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)?.executions ?? 0).toBe(0);
  });

  it('with RESUBMIT_UNKNOWN_NOT_FOUND, allows exactly one resubmission after the grace period', async () => {
    const s = system({ reconcile: { resubmitUnknownNotFound: true } });
    const r = request();
    await unknownToProvider(s, r);
    // Before the provider has positively said "not found" for the grace period, the message cannot pay.
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped', state: 'UNKNOWN' });
    s.clock.advance(1 * MINUTE);
    await s.reconcile();
    s.clock.advance(16 * MINUTE);
    await s.reconcile();
    const authorized = await payoutOf(r);
    expect(authorized?.state).toBe('UNKNOWN');
    expect(authorized?.record.resubmitAuthorized).toBe(true);

    // The original request enqueued again: one Payout call, same withdrawal_reference.
    const [first, second] = [await s.pay(r), await s.pay(r)];
    expect(first).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(second).toMatchObject({ outcome: 'skipped' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    expect((await payoutOf(r))?.record.submitAttempts).toBe(2);

    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
  });

  it("keeps a resubmission's outcome when a reconciler look lands during its Payout call (the same intent, in UNKNOWN)", async () => {
    const r = request();
    let racing = false;
    // While the resubmitted call is under way, an order notification makes the payout due and the
    // reconciler's GetPayout (the provider has not seen the call yet) records "not found" on it.
    const provider: PayoutProvider = {
      verifyAccount: (input, creds) => client.verifyAccount(input, creds),
      getPayout: (identity, creds) => client.getPayout(identity, creds),
      payout: async (input, creds) => {
        if (racing) {
          const before = await payoutOf(r);
          await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
          await s.reconcile();
          const after = await payoutOf(r);
          expect(after?.state).toBe('UNKNOWN');
          expect(after?.version).toBeGreaterThan(before?.version ?? 0);
        }
        return client.payout(input, creds);
      },
    };
    const s = system({ provider, reconcile: { resubmitUnknownNotFound: true } });
    await unknownToProvider(s, r);
    s.clock.advance(1 * MINUTE);
    await s.reconcile();
    s.clock.advance(16 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.record.resubmitAuthorized).toBe(true);

    racing = true;
    expect(await s.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    const paid = await payoutOf(r);
    expect(paid?.state).toBe('SUBMITTED');
    expect(paid?.record.acknowledgedAt).toBeDefined();
    expect(paid?.maySubmit).toBe(false);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
  });

  it('moves a payout nobody processed (stuck in ACCEPTED) to NEEDS_REVIEW at the review deadline, not before', async () => {
    const s = system();
    const r = request();
    const stuck = await storeAccepted(r, '25.50', s.clock.now());
    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    const waiting = await payoutOf(r);
    expect(waiting?.state).toBe('ACCEPTED');
    expect(waiting?.record.nextCheckAt).toBe(new Date(Date.parse(stuck.record.createdAt) + 60 * MINUTE).toISOString());
    s.clock.advance(58 * MINUTE);
    await s.reconcile();
    const reviewed = await payoutOf(r);
    expect(reviewed?.state).toBe('NEEDS_REVIEW');
    expect(reviewed?.record.reason).toMatch(/not processed within 60 minutes; nothing was paid/);
  });

  it('leaves a fresh SUBMITTING to its worker, and resolves a stale one through GetPayout (worker crashed after the call)', async () => {
    const s = system();
    const r = request();
    const now = s.clock.now();
    const accepted = await storeAccepted(r, '25.50', now);
    await h.repository.save(accepted, accepted.startVerifying(now).startSubmitting(now, 'Kwame Mensah'));
    await payOutsidePayrelay(r);

    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUBMITTING');
    s.clock.advance(4 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
  });

  it('treats a stale SUBMITTING the provider does not know as UNKNOWN (worker crashed before the call)', async () => {
    const s = system();
    const r = request();
    const now = s.clock.now();
    const accepted = await storeAccepted(r, '25.50', now);
    await h.repository.save(accepted, accepted.startVerifying(now).startSubmitting(now));
    s.clock.advance(6 * MINUTE);
    await s.reconcile();
    const unknown = await payoutOf(r);
    expect(unknown?.state).toBe('UNKNOWN');
    expect(unknown?.record.notFoundSince).toBeDefined();
    // The message arriving late must not pay it (rule 1): only reconciliation moves it.
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped' });
    s.clock.advance(16 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('sends a contradictory provider answer (another amount) to NEEDS_REVIEW', async () => {
    const s = system();
    const r = request();
    const now = s.clock.now();
    const accepted = await storeAccepted(r, '10.00', now);
    await h.repository.save(accepted, accepted.startVerifying(now).startSubmitting(now).submitted('PENDING', now));
    await payOutsidePayrelay(r, '20.00');
    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    const p = await payoutOf(r);
    expect(p?.state).toBe('NEEDS_REVIEW');
    expect(p?.record.reason).toMatch(/contradictory provider answer: provider reports amount 20.00, payout is 10.00/);
  });

  it('backs off the next check while the provider reports the payout in progress (doubling from 10 s after the intent), then settles it', async () => {
    const s = system({ reconcile: { reviewAfterMs: 24 * 60 * MINUTE } });
    h.sim.admin.setFaults('getPayout', { slowProgressionChecks: 4 });
    const r = request();
    expect(await s.pay(r)).toMatchObject({ state: 'SUBMITTED' });
    h.sim.admin.clearFaults();
    const gaps: number[] = [];
    for (let i = 0; i < 3; i++) {
      const p = await payoutOf(r);
      const due = Date.parse(p?.record.nextCheckAt ?? '');
      s.clock.advance(due - s.clock.now().getTime());
      await s.reconcile();
      const after = await payoutOf(r);
      expect(after?.state).toBe('SUBMITTED');
      gaps.push((Date.parse(after?.record.nextCheckAt ?? '') - s.clock.now().getTime()) / 1000);
    }
    // The first look is the create's (60 s after it); then 80 s, 160 s and 320 s after the intent.
    expect(gaps).toEqual([20, 80, 160]);
    // The simulator settles it after its fourth check (asynchronously); a later run finds it final.
    for (let i = 0; i < 5 && (await payoutOf(r))?.state === 'SUBMITTED'; i++) {
      s.clock.advance(60 * MINUTE);
      await s.reconcile();
    }
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
  });

  it('keeps an open payout when GetPayout fails, checking again later', async () => {
    const s = system();
    const r = request();
    await s.pay(r);
    h.sim.admin.setFaults('getPayout', { errorRate: 1 });
    s.clock.advance(1 * MINUTE);
    await s.reconcile();
    const p = await payoutOf(r);
    expect(p?.state).toBe('SUBMITTED');
    expect(p?.record.checks).toBe(1);
    h.sim.admin.clearFaults();
  });

  it('hands an intent released as unsent to review as "nothing was paid" when GetPayout stays down, so no resolve needs force', async () => {
    const r = request();
    await expect(system({ provider: payoutNeverSent }).pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
    const s = system();
    h.sim.admin.setFaults('getPayout', { errorRate: 1 });
    try {
      s.clock.advance(61 * MINUTE);
      await s.reconcile();
    } finally {
      h.sim.admin.clearFaults();
    }
    const review = await payoutOf(r);
    expect(review?.record).toMatchObject({ state: 'NEEDS_REVIEW', reason: 'not processed within 60 minutes; nothing was paid' });
    expect(review?.mayHaveReachedProvider).toBe(false);
  });

  it('stops at its time budget and leaves the rest for the next run', async () => {
    const s = system();
    const r = request();
    await s.pay(r);
    s.clock.advance(1 * MINUTE);
    expect(await s.reconcile(0)).toMatchObject({ read: 0, budgetExhausted: true });
    expect((await payoutOf(r))?.state).toBe('SUBMITTED');
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
  });
});

/** GetPayout answers scripted per call ('notFound' or a status word); every other call goes to the simulator. */
function scriptedReads(r: PayoutRequestInput, script: string[], clock: () => Date) {
  const answers: Array<{ at: number; found: boolean }> = [];
  const provider: PayoutProvider = {
    verifyAccount: (input, creds) => client.verifyAccount(input, creds),
    payout: (input, creds) => client.payout(input, creds),
    getPayout: async (identity, creds) => {
      // Other tests' payouts are open in the same table: only this reference is scripted.
      if (identity.withdrawal_reference !== r.withdrawal_reference) return client.getPayout(identity, creds);
      const word = script.shift() ?? 'notFound';
      const found = word !== 'notFound';
      answers.push({ at: clock().getTime(), found });
      if (!found) return { found: false, outcome: mapProviderStatus(undefined), raw: {} };
      return {
        found: true,
        status: word,
        outcome: mapProviderStatus(word),
        raw: { withdrawal_reference: r.withdrawal_reference, amount: r.amount, currency: r.currency, status: word },
      };
    },
  };
  /** When the current unbroken run of "not found" answers began (undefined if the last answer was found). */
  const runStart = (): number | undefined => {
    let start: number | undefined;
    for (const a of answers) start = a.found ? undefined : (start ?? a.at);
    return start;
  };
  return { provider, answers, runStart, everFound: () => answers.some((a) => a.found) };
}

describe('gateway error words are not final, and get their own shorter review window', () => {
  /** Reconciles the payout each time it is due until it is final (or `checks` runs); returns its age at the last run. */
  async function reconcileUntilFinal(s: ReturnType<typeof system>, r: PayoutRequestInput, checks: number): Promise<number> {
    for (let i = 0; i < checks; i++) {
      const before = await payoutOf(r);
      if (!before || before.isFinal) break;
      s.clock.advance(Math.max(0, Date.parse(before.record.nextCheckAt ?? '') - s.clock.now().getTime()));
      await s.reconcile();
    }
    const last = await payoutOf(r);
    return s.clock.now().getTime() - Date.parse(last?.record.createdAt ?? '');
  }

  it('a payout the provider keeps reporting GATEWAY_ERROR goes to NEEDS_REVIEW after the gateway window, not the 24-hour one, and a later word settles it', async () => {
    const s = system({ reconcile: { reviewAfterMs: 24 * 60 * MINUTE, gatewayErrorReviewAfterMs: 120 * MINUTE } });
    const r = request();
    // The simulator keeps the payout in progress and answers GATEWAY_ERROR for it over real HTTP.
    h.sim.admin.setFaults('getPayout', { gatewayErrorRate: 1, slowProgressionChecks: 1000 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    const age = await reconcileUntilFinal(s, r, 20);
    const review = await payoutOf(r);
    expect(review?.state).toBe('NEEDS_REVIEW');
    expect(review?.record.providerStatus).toBe('GATEWAY_ERROR');
    expect(review?.record.reason).toBe('provider reports GATEWAY_ERROR (a gateway error) 120 minutes or more after acceptance');
    expect(age).toBeGreaterThanOrEqual(120 * MINUTE);
    // The first check after the window (hourly back-off by then), far from the 24-hour review.
    expect(age).toBeLessThan(185 * MINUTE);
    // Never final by itself: when the provider settles, the review watch follows its word.
    h.sim.admin.settlePayout(identityOf(r), 'succeeded');
    h.sim.admin.clearFaults();
    s.clock.advance(61 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('a word the table does not know is neither success nor final, and waits for the 24-hour review window', async () => {
    const r = request();
    const reads = scriptedReads(r, Array.from({ length: 40 }, () => 'ON_HOLD'), () => new Date());
    const s = system({ reads: reads.provider, reconcile: { reviewAfterMs: 24 * 60 * MINUTE, gatewayErrorReviewAfterMs: 120 * MINUTE } });
    expect(await s.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    s.clock.advance(5 * 60 * MINUTE);
    await s.reconcile();
    expect(await payoutOf(r)).toMatchObject({ state: 'SUBMITTED', record: { providerStatus: 'ON_HOLD' } });
    const age = await reconcileUntilFinal(s, r, 40);
    const last = await payoutOf(r);
    expect(last?.state).toBe('NEEDS_REVIEW');
    expect(last?.record.reason).toBe('still ON_HOLD after 1440 minutes');
    expect(age).toBeGreaterThanOrEqual(24 * 60 * MINUTE);
  });
});

/**
 * The harness's repository with a racing look: once armed, the first write whose look saw the
 * provider hold the payout (it ends a not-found run) finds `winner`'s version written first, as a
 * look that read the same version and answered "not found" would have written it.
 */
function racingLook(winner: (previous: Payout, at: Date) => Payout) {
  let armed = false;
  const repository = new Proxy(h.repository, {
    get(target, prop, receiver) {
      if (prop !== 'save') {
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return async (previous: Payout, next: Payout) => {
        if (armed && previous.record.notFoundSince !== undefined && next.record.notFoundSince === undefined) {
          armed = false;
          await target.save(previous, winner(previous, new Date(Date.parse(next.record.updatedAt))));
        }
        return target.save(previous, next);
      };
    },
  });
  return { repository, arm: () => void (armed = true), armed: () => armed };
}

describe('"not found" is an unbroken run, and a refusal is settled through GetPayout', () => {
  /**
   * Runs the reconciler each time the payout is due, `checks` times or until it is final, and after
   * each run checks rule 1: a resubmission token or a "does not know" review only after an unbroken
   * not-found run of the whole grace period, and never after the provider acknowledged the reference.
   */
  async function reconcileWhileDue(s: ReturnType<typeof system>, r: PayoutRequestInput, reads: ReturnType<typeof scriptedReads>, checks: number) {
    for (let i = 0; i < checks; i++) {
      const before = await payoutOf(r);
      if (!before || before.isFinal) break;
      const due = Date.parse(before.record.nextCheckAt ?? '') - s.clock.now().getTime();
      s.clock.advance(Math.max(0, due));
      await s.reconcile();
      const after = await payoutOf(r);
      const now = s.clock.now().getTime();
      const run = reads.runStart();
      const notKnown = after?.record.resubmitAuthorized === true || /does not know/.test(after?.record.reason ?? '');
      if (notKnown) {
        expect(reads.everFound(), 'acted on "not found" after the provider acknowledged the reference').toBe(false);
        expect(run, 'acted on "not found" without a not-found run').toBeDefined();
        expect(now - (run ?? now), 'acted on "not found" before the grace period of the current run').toBeGreaterThanOrEqual(15 * MINUTE);
      }
      // A redelivery of the request after every run: it must never pay once the provider acknowledged it.
      await s.pay(r);
    }
  }

  it('never resubmits after the provider acknowledged the reference (404, GATEWAY_ERROR, then 404s; resubmission on)', async () => {
    const r = request();
    let now = (): Date => new Date();
    const reads = scriptedReads(r, ['notFound', 'GATEWAY_ERROR'], () => now());
    const s = system({ reads: reads.provider, reconcile: { resubmitUnknownNotFound: true, reviewAfterMs: 24 * 60 * MINUTE } });
    now = () => s.clock.now();
    await unknownToProvider(s, r);
    await reconcileWhileDue(s, r, reads, 10);
    const last = await payoutOf(r);
    expect(last?.record.acknowledgedAt).toBeDefined();
    expect(last?.state).toBe('NEEDS_REVIEW');
    expect(last?.record.reason).toMatch(/contradictory provider answers: the provider acknowledged this reference/);
    // The only Payout call is the first one (refused with a 5xx before the provider committed it).
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 0 });
  });

  it('restarts the grace period at the first "not found" after an acknowledging answer (resubmission off)', async () => {
    const r = request();
    let now = (): Date => new Date();
    const reads = scriptedReads(r, ['notFound', 'notFound', 'notFound', 'GATEWAY_ERROR'], () => now());
    const s = system({ reads: reads.provider, reconcile: { reviewAfterMs: 24 * 60 * MINUTE } });
    now = () => s.clock.now();
    await unknownToProvider(s, r);
    await reconcileWhileDue(s, r, reads, 12);
    const last = await payoutOf(r);
    expect(last?.state).toBe('NEEDS_REVIEW');
    expect(last?.record.reason).toMatch(/contradictory provider answers/);
    const review = Date.parse(last?.record.history.at(-1)?.at ?? '');
    const firstAfterAck = reads.answers.findLast((a, i) => !a.found && reads.answers[i - 1]?.found === true)?.at ?? review;
    expect(review - firstAfterAck).toBeGreaterThanOrEqual(15 * MINUTE);
  });

  it.each([
    ['200 "reference has been used"', { status: 200, body: '{"success":false,"message":"reference has been used"}' }],
    ['400 "Transaction could not be processed"', { status: 400, body: '{"success":false,"message":"Transaction could not be processed"}' }],
  ])('a refusal after the provider committed the payout (%s) is UNKNOWN, checked at once, and SUCCEEDED, never FAILED', async (_name, refusal) => {
    const s = system();
    const r = request();
    h.sim.admin.setFaults('payout', { refusalAfterCommitRate: 1, refusals: [refusal], times: 1 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
    const refused = await payoutOf(r);
    expect(refused?.record.reason).toContain(JSON.parse(refusal.body).message);
    expect(refused?.record.nextCheckAt).toBe(s.clock.now().toISOString());
    // Due at once: a run at the same instant settles it through GetPayout.
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('keeps the provider\'s "PENDING" when a racing look wrote "not found" first: the run is broken, the refusal is not FAILED', async () => {
    const r = request();
    // The sweep and a delayed check read one version and ask GetPayout side by side; the other writer wins.
    const racing = racingLook((previous, at) => previous.notFound(at));
    const clock = () => s.clock.now();
    const reads = scriptedReads(r, ['notFound', 'PENDING', 'notFound', 'notFound', 'notFound'], clock);
    const s = system({ reads: reads.provider, repository: racing.repository });
    h.sim.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"Transaction could not be processed"}' }], times: 1 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
    s.clock.advance(MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.record.notFoundSince).toBeDefined();
    s.clock.advance(13 * MINUTE);
    racing.arm();
    await s.reconcile();
    expect(racing.armed()).toBe(false);
    const held = await payoutOf(r);
    expect(held?.record).toMatchObject({ state: 'SUBMITTED', notFoundSince: undefined, providerStatus: 'PENDING' });
    expect(held?.record.acknowledgedAt).toBeDefined();
    // "Not found" from now on: an acknowledged payout goes to review after the grace period, never FAILED.
    for (let i = 0; i < 3; i++) {
      s.clock.advance(10 * MINUTE);
      await s.reconcile();
    }
    expect((await payoutOf(r))?.state).toBe('NEEDS_REVIEW');
  });

  /**
   * A refused payout (UNKNOWN) whose second look, `minutes` after its first "not found", answers
   * "PENDING" while a racing look that read the same version writes `winner`'s version first.
   */
  async function refusedThenRaced(winner: (previous: Payout, at: Date) => Payout, minutes: number) {
    const r = request();
    const racing = racingLook(winner);
    const reads = scriptedReads(r, ['notFound', 'PENDING'], () => s.clock.now());
    const s = system({ reads: reads.provider, repository: racing.repository });
    h.sim.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"Transaction could not be processed"}' }], times: 1 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
    s.clock.advance(MINUTE);
    await s.reconcile();
    s.clock.advance(minutes * MINUTE);
    racing.arm();
    await s.reconcile();
    expect(racing.armed()).toBe(false);
    return { r, s };
  }

  it('notes the provider\'s "PENDING" on a payout a racing look has just made FAILED, and a retry of it is then refused', async () => {
    // The winner's look found "not found" at the end of the grace period and wrote FAILED.
    const { r, s } = await refusedThenRaced((previous, at) => previous.failed('refused; the provider does not hold it (a racing look)', at), 15);
    const failed = await payoutOf(r);
    expect(failed?.state).toBe('FAILED');
    expect(failed?.acknowledged).toBe(true);
    expect(failed?.record.history.at(-1)).toMatchObject({ from: 'FAILED', to: 'FAILED', reason: expect.stringMatching(/^provider holds the payout \(PENDING\) after all/) });
    let sent = 0;
    const credentials = credentialsFromCachedSecret({ get: async () => h.sim.admin.credentials(PARTNER_CODE, MERCHANT_ID) });
    const deps = { repository: h.repository, provider: client, credentials, clock: s.clock, log: silentLog, telemetry, notifications: storedNotifications(), queue: { send: async () => void (sent += 1) } };
    await expect(retryPayout(deps, { identity: identityOf(r), newReference: `${r.withdrawal_reference}-r`, by: 'ama@ops', accountNumber: r.account_number })).rejects.toThrow(
      /acknowledged .* now says it does not know it, so it could still be delivered/,
    );
    expect(sent).toBe(0);
  });

  it('leaves alone a FAILED a racing look made on the provider\'s own failure word: its "PENDING" is the older answer', async () => {
    // The winner's GetPayout answered FAILED (kept as the provider status); the loser's, a moment before, PENDING.
    const { r } = await refusedThenRaced((previous, at) => previous.failed('provider reports FAILED', at, 'FAILED'), 5);
    const failed = await payoutOf(r);
    expect(failed?.record).toMatchObject({ state: 'FAILED', providerStatus: 'FAILED', reason: 'provider reports FAILED' });
    expect(failed?.acknowledged).toBe(false);
    expect(failed?.record.history.at(-1)).toMatchObject({ to: 'FAILED', reason: 'provider reports FAILED' });
  });

  it.each([false, true])('a refusal the provider does not hold for the whole grace period is FAILED "refused; the provider does not hold it" (resubmission %s)', async (resubmit) => {
    const s = system({ reconcile: { resubmitUnknownNotFound: resubmit } });
    const r = request();
    h.sim.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"Transaction could not be processed"}' }], times: 1 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('UNKNOWN');
    s.clock.advance(16 * MINUTE);
    await s.reconcile();
    const last = await payoutOf(r);
    expect(last?.state).toBe('FAILED');
    expect(last?.record.reason).toMatch(/^refused; the provider does not hold it/);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 0 });
  });

  it('a refusal on the operator list of definite refusals is FAILED at once; any other stays UNKNOWN', async () => {
    const s = system({ worker: { definiteRefusals: [{ status: 400, message: /insufficient (balance|funds)/i }] } });
    const [listed, other] = [request(), request()];
    h.sim.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"Insufficient balance"}' }], times: 1 });
    expect(await s.pay(listed)).toMatchObject({ outcome: 'failed', state: 'FAILED' });
    expect((await payoutOf(listed))?.record.reason).toMatch(/definite refusal\): Insufficient balance/);
    h.sim.admin.setFaults('payout', { refusalRate: 1, refusals: [{ status: 200, body: '{"success":false,"message":"Insufficient balance"}' }], times: 1 });
    expect(await s.pay(other)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
  });
});

describe('worker outcomes the simulator produces only through explicit ports', () => {
  it("sends every AccountVerification of a batch before it builds any create: the create overlaps verification and never holds it back", async () => {
    const order: string[] = [];
    const provider: PayoutProvider = {
      verifyAccount: (input, creds) => {
        order.push('verify');
        return client.verifyAccount(input, creds);
      },
      getPayout: (identity, creds) => client.getPayout(identity, creds),
      payout: (input, creds) => client.payout(input, creds),
    };
    const repository: PayoutRepository = new Proxy(h.repository, {
      get(target, name: keyof PayoutRepository) {
        if (name !== 'createAccepted') return target[name];
        return (payout: Payout) => {
          order.push('create');
          return target.createAccepted(payout);
        };
      },
    });
    const worker = system({ provider, repository });
    const batch = Array.from({ length: 5 }, () => request());
    const results = await Promise.all(batch.map((r) => worker.pay(r)));
    expect(results.map((r) => r.outcome)).toEqual(Array(5).fill('submitted'));
    expect(order).toEqual([...Array(5).fill('verify'), ...Array(5).fill('create')]);
    for (const r of batch) expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
  });

  it('keeps SUBMITTING with a one-time retry token when the Payout call could not be sent, and pays once on redelivery', async () => {
    const down = system({ provider: payoutNeverSent });
    const r = request();
    await expect(down.pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    const waiting = await payoutOf(r);
    expect(waiting?.state).toBe('SUBMITTING');
    expect(waiting?.record.submitRetryAllowed).toBe(true);
    expect(waiting?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING']);

    // The reconciler sees a not-sent SUBMITTING: the provider does not know it, and it is left to the message.
    down.clock.advance(2 * MINUTE);
    await down.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUBMITTING');

    const up = system();
    expect(await up.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(await up.pay(r)).toMatchObject({ outcome: 'skipped' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 1 });
    expect((await payoutOf(r))?.record.submitAttempts).toBe(2);
  });

  it('a request for a stored identity without its user_reference or expected_name is a conflict: a token is spent only for the request stored', async () => {
    const r = request({ user_reference: 'kyc-subject-1' });
    await expect(system({ provider: payoutNeverSent }).pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    expect(await system().pay({ ...r, user_reference: undefined })).toMatchObject({
      outcome: 'conflict',
      reason: 'user_reference differs from the stored payout of this identity',
    });
    expect(await system().pay({ ...r, user_reference: undefined, expected_name: 'Someone Else' })).toMatchObject({
      outcome: 'conflict',
      reason: 'expected_name, user_reference differ from the stored payout of this identity',
    });
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    // The request stored, delivered again, spends the token and pays once.
    expect(await system().pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
  });

  it('does not spend a retry token for a request that verifies as another account holder', async () => {
    // No expected_name, so no name policy: only the holder stored with the intent can tell.
    const r = request({ expected_name: undefined });
    await expect(system({ provider: payoutNeverSent }).pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    // Same identity, amount, code and last four digits, but another account (and holder).
    h.sim.admin.addAccount({ account_code: 'MTN', account_number: '0555553456', account_name: 'Esi Darko', currencies: ['GHS'] });
    const imposter = { ...r, account_number: '0555553456' };
    expect(await system().pay(imposter)).toMatchObject({ outcome: 'conflict', state: 'SUBMITTING' });
    expect((await payoutOf(r))?.record.submitRetryAllowed).toBe(true);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('tells apart two accounts with the same mask by their fingerprints, even before any verification answered', async () => {
    // No expected_name and no verified holder stored: the fingerprint is all that tells them apart.
    const r = request({ expected_name: undefined });
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
    await expect(system().pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    const released = await payoutOf(r);
    expect(released?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true, verifiedName: undefined });
    expect(released?.record.accountFingerprint).toBe(await testFingerprints.of(r));
    h.sim.admin.addAccount({ account_code: 'MTN', account_number: '0555553456', account_name: 'Esi Darko', currencies: ['GHS'] });
    const sameMask = { ...r, account_number: '0555553456' };
    expect(maskAccount(sameMask.account_number)).toBe(released?.record.accountMasked);
    expect(await system().pay(sameMask)).toMatchObject({ outcome: 'conflict', reason: 'account_number differs from the stored payout of this identity' });
    expect((await payoutOf(r))?.record.submitRetryAllowed).toBe(true);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    // The request stored, delivered again, pays once.
    expect(await system().pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
  });

  it('hands a not-sent SUBMITTING that no delivery retries to NEEDS_REVIEW at the review deadline', async () => {
    const s = system({ provider: payoutNeverSent });
    const r = request();
    await expect(s.pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    s.clock.advance(61 * MINUTE);
    await s.reconcile();
    const p = await payoutOf(r);
    expect(p?.state).toBe('NEEDS_REVIEW');
    expect(p?.record.reason).toMatch(/nothing was paid/);
  });

  it('keeps the Payout outcome when a notification and a reconcile run touch the payout during the call', async () => {
    const r = request();
    // While the worker is inside the Payout call, an order notification makes the payout due and the
    // reconciler records its look at the fresh SUBMITTING: the version moves on under the worker.
    const racing: PayoutProvider = {
      verifyAccount: (input, creds) => client.verifyAccount(input, creds),
      getPayout: (identity, creds) => client.getPayout(identity, creds),
      payout: async (input, creds) => {
        const before = await payoutOf(r);
        await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
        await s.reconcile();
        const after = await payoutOf(r);
        expect(after?.state).toBe('SUBMITTING');
        expect(after?.version).toBeGreaterThan(before?.version ?? 0);
        return client.payout(input, creds);
      },
    };
    const s = system({ provider: racing });
    expect(await s.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect((await payoutOf(r))?.state).toBe('SUBMITTED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
  });

  it('records a duplicate-reference refusal as UNKNOWN, never FAILED, and reconciles it (rule 2)', async () => {
    const s = system();
    const r = request();
    // Someone (an earlier deployment, a manual call) already paid this reference.
    await payOutsidePayrelay(r);
    expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
    expect((await payoutOf(r))?.record.reason).toMatch(/duplicate/);
    s.clock.advance(1 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1, attempts: 2, duplicates: 1 });
  });

  it('gates on KYC when enabled: only an approved user_reference is paid', async () => {
    const decisions: Record<string, 'approved' | 'not_approved'> = { 'user-ok': 'approved', 'user-no': 'not_approved' };
    const kyc: KycApproval = {
      check: async (userReference) => {
        const decision = decisions[userReference];
        if (!decision) throw new Error('KYC service unreachable');
        return decision;
      },
    };
    const s = system({ kyc, worker: { kycGating: true } });
    const [ok, no, down, none] = [
      request({ user_reference: 'user-ok' }),
      request({ user_reference: 'user-no' }),
      request({ user_reference: 'user-unreachable' }),
      request(),
    ];
    expect(await s.pay(ok)).toMatchObject({ state: 'SUBMITTED' });
    expect(await s.pay(no)).toMatchObject({ state: 'REJECTED', reason: 'KYC not approved for this user_reference' });
    expect((await payoutOf(no))?.record.reason).toBe('intent withdrawn before any Payout call: KYC not approved for this user_reference');
    // KYC could not be asked: the intent written beside the verification is released (nothing sent).
    await expect(s.pay(down)).rejects.toBeInstanceOf(RetryLaterError);
    expect((await payoutOf(down))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true, reason: expect.stringMatching(/^KYC approval could not be checked: .*; intent released, no Payout call sent$/) });
    expect(await s.pay(none)).toMatchObject({ state: 'SUBMITTED' });
    // Gating off (the default): user_reference is kept but not checked.
    const off = request({ user_reference: 'user-no' });
    expect(await system({ kyc }).pay(off)).toMatchObject({ state: 'SUBMITTED' });
    expect((await payoutOf(off))?.record.userReference).toBe('user-no');
    for (const r of [no, down]) expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });
});

describe('an AccountVerification refusal makes the payout REJECTED only when it is about the account', () => {
  /** A provider whose AccountVerification answers `status` and `body` over HTTP; Payout and GetPayout go to the simulator. */
  async function verifyingWith(status: number, body: string) {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const refusing = new PayoutServiceClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, timeoutMs: 800 });
    const provider: PayoutProvider = {
      verifyAccount: (input, creds) => refusing.verifyAccount(input, creds),
      getPayout: (identity, creds) => client.getPayout(identity, creds),
      payout: (input, creds) => client.payout(input, creds),
    };
    const close = async (): Promise<void> => {
      refusing.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
    return { provider, close };
  }

  it('a refusal about how it was asked (an invalid signature) releases the intent for a retry: never REJECTED, nothing paid', async () => {
    const r = request();
    const refusing = await verifyingWith(400, '{"success":false,"message":"invalid signature"}');
    try {
      await expect(system({ provider: refusing.provider }).pay(r)).rejects.toThrow(
        'account verification did not complete: HTTP 400: "invalid signature"',
      );
    } finally {
      await refusing.close();
    }
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    // Once the setup is mended, the redelivery pays, once.
    expect(await system().pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ executions: 1 });
  });

  it('a refusal naming the account, or the bare success: false of the documented answer, is REJECTED', async () => {
    const answers: Array<[number, string]> = [
      [400, '{"success":false,"message":"Invalid account number"}'],
      [200, '{"success":false}'],
    ];
    for (const [status, body] of answers) {
      const r = request();
      const refusing = await verifyingWith(status, body);
      try {
        expect(await system({ provider: refusing.provider }).pay(r), body).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
      } finally {
        await refusing.close();
      }
      expect(ledgerOf(h.sim, r.withdrawal_reference), body).toBeUndefined();
    }
  });
});

describe('the intent is created beside AccountVerification; Payout waits for both', () => {
  /** AccountVerification held until the test lets it answer; every other call goes to the simulator. */
  function heldVerification() {
    const held = heldCall();
    return { provider: heldProvider({ verifyAccount: held }), release: held.release, started: held.reached };
  }

  it('a name mismatch after the intent withdraws it: REJECTED with its history, no Payout call', async () => {
    const s = system();
    const r = request({ expected_name: 'Esi Darko' });
    const before = counts[METRIC.payoutRejected] ?? 0;
    expect(await s.pay(r)).toMatchObject({ outcome: 'rejected', state: 'REJECTED', reason: expect.stringMatching(/^name mismatch: expected "Esi Darko", account holder "Kwame Mensah"/) });
    const p = await payoutOf(r);
    expect(p?.record.history.map((e) => `${e.from}->${e.to}`)).toEqual(['null->ACCEPTED', 'ACCEPTED->VERIFYING', 'VERIFYING->SUBMITTING', 'SUBMITTING->REJECTED']);
    expect(p?.record.reason).toMatch(/^intent withdrawn before any Payout call: name mismatch/);
    expect(p?.record).toMatchObject({ verifiedName: 'Kwame Mensah', submitAttempts: 1 });
    expect(p?.record.nextCheckAt).toBeUndefined();
    expect(counts[METRIC.payoutRejected]).toBe(before + 1);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    // A redelivery changes nothing and pays nothing.
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped', state: 'REJECTED' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('an account the provider does not know withdraws the intent (REJECTED "account not found")', async () => {
    const s = system();
    const r = request({ account_number: '0244999999', expected_name: undefined });
    expect(await s.pay(r)).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
    expect((await payoutOf(r))?.record.reason).toMatch(/^intent withdrawn before any Payout call: account (not found|verification refused)/);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('verification unavailable: the intent is released with a retry token, the reconciler leaves it, and the redelivery pays exactly once', async () => {
    const s = system();
    const r = request();
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
    await expect(s.pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    const released = await payoutOf(r);
    expect(released?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true, submitAttempts: 1 });
    expect(released?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING']);
    // What the provider answered (the simulator's 503 and its words), not an error class name.
    expect(released?.record.reason).toBe(
      'account verification did not complete: HTTP 503: "service temporarily unavailable (injected fault)"; intent released, no Payout call sent',
    );
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    // The reconciler asks GetPayout (not found) and leaves the released intent to the message.
    s.clock.advance(2 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
    // Two redeliveries race for the token: one pays, the other finds none.
    const results = await Promise.all([s.pay(r), s.pay(r)]);
    expect(results.map((x) => x.outcome).sort()).toEqual(['skipped', 'submitted']);
    const paid = await payoutOf(r);
    expect(paid?.record).toMatchObject({ state: 'SUBMITTED', verifiedName: 'Kwame Mensah', submitAttempts: 2 });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('a payout paid late on a retry gets its own review window, counted from that Payout call', async () => {
    const s = system({ reconcile: { reviewAfterMs: 24 * 60 * MINUTE } });
    const r = request();
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
    await expect(s.pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    // The retry pays 23 h 50 min after acceptance; the provider then reports PENDING for a long while.
    s.clock.advance((23 * 60 + 50) * MINUTE);
    h.sim.admin.setFaults('getPayout', { slowProgressionChecks: 1000 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    s.clock.advance(20 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUBMITTED');
    s.clock.advance(24 * 60 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'NEEDS_REVIEW', reason: 'still PENDING after 1440 minutes' });
    h.sim.admin.clearFaults();
  });

  it('a released intent whose retry is refused (KYC not approved) is withdrawn, never paid', async () => {
    let decision: 'approved' | 'not_approved' | 'down' = 'down';
    const kyc: KycApproval = {
      check: async () => {
        if (decision === 'down') throw new Error('KYC service unreachable');
        return decision;
      },
    };
    const s = system({ kyc, worker: { kycGating: true } });
    const r = request({ user_reference: 'user-later-refused' });
    await expect(s.pay(r)).rejects.toBeInstanceOf(RetryLaterError);
    expect((await payoutOf(r))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
    decision = 'not_approved';
    expect(await s.pay(r)).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
    const p = await payoutOf(r);
    expect(p?.record.reason).toBe('intent withdrawn before any Payout call: KYC not approved for this user_reference');
    expect(p?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'REJECTED']);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
  });

  it('a duplicate delivery while the first is verifying is skipped: one Payout call', async () => {
    const held = heldVerification();
    const first = system({ provider: held.provider });
    const r = request();
    const paying = first.pay(r);
    await held.started;
    const intent = await stored(r);
    expect(intent.state).toBe('SUBMITTING');
    // The second delivery meets the intent: it never calls Payout, whatever its own verification says.
    expect(await system().pay(r)).toMatchObject({ outcome: 'skipped', state: 'SUBMITTING' });
    held.release();
    expect(await paying).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('a reconciler look and an order notification during the verification do not stop the withdrawal or the release (the same intent)', async () => {
    for (const outcome of ['mismatch', 'unavailable'] as const) {
      const held = heldVerification();
      const s = system({ provider: held.provider });
      const r = request(outcome === 'mismatch' ? { expected_name: 'Esi Darko' } : {});
      if (outcome === 'unavailable') h.sim.admin.setFaults('accountVerification', { errorRate: 1, times: 1 });
      const paying = s.pay(r).catch((error: unknown) => error);
      await held.started;
      const intent = await stored(r);
      await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
      await s.reconcile();
      const bumped = await payoutOf(r);
      expect(bumped?.record).toMatchObject({ state: 'SUBMITTING', submitAttempts: 1 });
      expect(bumped?.version).toBeGreaterThan(intent.version);
      held.release();
      const result = await paying;
      if (outcome === 'mismatch') {
        expect(result).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
        expect((await payoutOf(r))?.state).toBe('REJECTED');
      } else {
        expect(result).toBeInstanceOf(RetryLaterError);
        expect((await payoutOf(r))?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
      }
      h.sim.admin.clearFaults();
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    }
  });

  it('a payout `payouts enqueue` recorded ACCEPTED gets its intent beside the verification, and is withdrawn when refused', async () => {
    const s = system();
    const [paid, refused] = [request(), request({ expected_name: 'Esi Darko' })];
    for (const r of [paid, refused]) await storeAccepted(r, r.amount, s.clock.now());
    expect(await s.pay(paid)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(await s.pay(refused)).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
    expect((await payoutOf(paid))?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED']);
    expect((await payoutOf(refused))?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'REJECTED']);
    expect(ledgerOf(h.sim, paid.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
    expect(ledgerOf(h.sim, refused.withdrawal_reference)).toBeUndefined();
  });

  it('a misrouted request writes no intent: created VERIFYING and REJECTED, as before', async () => {
    const s = system();
    const r = request({ platform_merchant_id: 'another-merchant' });
    expect(await s.pay(r)).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
    expect((await payoutOf(r))?.record.history.map((e) => e.to)).toEqual(['ACCEPTED', 'VERIFYING', 'REJECTED']);
    expect((await payoutOf(r))?.record.submitAttempts).toBe(0);
  });
});

describe('nothing that may have reached the provider is withdrawn: only the intent\'s writer, before its call, refuses it', () => {
  let accounts = 0;
  /** A simulator account of its own (holder `name`), so a test can hand it to another holder over HTTP. */
  function ownAccount(name: string): { number: string; holder(name: string): void } {
    accounts += 1;
    const number = `0277${String(process.pid % 1000).padStart(3, '0')}${String(accounts).padStart(3, '0')}`;
    const holder = (account_name: string): void => void h.sim.admin.addAccount({ account_code: 'MTN', account_number: number, account_name, currencies: ['GHS'] });
    holder(name);
    return { number, holder };
  }

  /** The states a payout went through, in order. */
  const path = async (r: PayoutRequestInput): Promise<string[]> => ((await payoutOf(r))?.record.history ?? []).map((e) => e.to);

  it('a worker that died after its Payout call leaves an intent no record can tell from an unsent one; a redelivery that now fails verification does not withdraw it', async () => {
    const account = ownAccount('Ama Owusu');
    const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
    // The worker's repository on its own client, which dies at the write of the Payout call's outcome.
    const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: h.aws.endpoints.dynamodb, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }), {
      marshallOptions: { removeUndefinedValues: true },
    });
    try {
      const injector = installCrashInjector([doc], h.aws.names.payoutsTable, (reference) => (reference === r.withdrawal_reference ? 'after-payout-call' : undefined));
      const dying = system({ repository: createPayoutRepository(h.aws.names.payoutsTable, doc) });
      await expect(injector.invoke(() => dying.pay(r))).rejects.toBeInstanceOf(SimulatedCrash);
    } finally {
      doc.destroy();
    }
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
    const left = await payoutOf(r);
    expect(left?.record).toMatchObject({ state: 'SUBMITTING', submitAttempts: 1 });
    expect(left?.record).not.toHaveProperty('submitRetryAllowed', true);
    // The stored record carries nothing that shows the call: the entity alone would allow the
    // withdrawal. Only the rule "the writer withdraws, before its call" keeps it from happening.
    expect(left?.withdrawIntent('name mismatch', new Date()).state).toBe('REJECTED');

    // The account now belongs to someone else: the redelivery's own verification would refuse it.
    account.holder('Esi Darko');
    const s = system();
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped', state: 'SUBMITTING' });
    expect(await path(r)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING']);
    // Reconciliation finds the provider holds it once the intent is stale; never REJECTED, never a second call.
    s.clock.advance(6 * MINUTE);
    await s.reconcile();
    expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('after a Payout the provider committed (then reset, or refused after the fact), a redelivery that fails verification is skipped and the payout settles SUCCEEDED', async () => {
    for (const fault of [{ resetRate: 1, times: 1 }, { refusalAfterCommitRate: 1, times: 1 }]) {
      const account = ownAccount('Ama Owusu');
      const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
      const s = system();
      h.sim.admin.setFaults('payout', fault);
      expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
      h.sim.admin.clearFaults();
      account.holder('Esi Darko');
      expect(await s.pay(r)).toMatchObject({ outcome: 'skipped', state: 'UNKNOWN' });
      await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
      await s.reconcile();
      expect((await payoutOf(r))?.state, JSON.stringify(fault)).toBe('SUCCEEDED');
      expect(await path(r)).not.toContain('REJECTED');
      expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
    }
  });

  it('a second delivery while the first is inside the Payout call is skipped, even when its own verification refuses', async () => {
    const account = ownAccount('Ama Owusu');
    const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
    const held = heldCall();
    const paying = system({ provider: heldProvider({ payout: held }) }).pay(r);
    await held.reached;
    account.holder('Esi Darko');
    expect(await system().pay(r)).toMatchObject({ outcome: 'skipped', state: 'SUBMITTING' });
    held.release();
    expect(await paying).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect(await path(r)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED']);
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('a retry token after a verified intent (this code, or the name the code before it wrote with the intent) is spent only for the same holder; a refusal is a conflict, never a withdrawal', async () => {
    const shapes = ['payout call not sent (this code)', 'stored by the code before this change'] as const;
    for (const shape of shapes) {
      const account = ownAccount('Ama Owusu');
      const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
      const s = system();
      if (shape === 'payout call not sent (this code)') {
        await expect(system({ provider: payoutNeverSent }).pay(r)).rejects.toBeInstanceOf(RetryLaterError);
      } else {
        // Before this change the intent was written after the verification, with the holder's name.
        const now = s.clock.now();
        const old = Payout.accept({ identity: identityOf(r), amount: r.amount, accountMasked: maskAccount(r.account_number), accountCode: 'MTN', expectedName: 'Ama Owusu' }, now)
          .startVerifying(now)
          .startSubmitting(now, 'Ama Owusu')
          .submitNotSent(now, 'payout call not sent: ProviderUnavailableError');
        await h.repository.createAccepted(old);
      }
      expect((await payoutOf(r))?.record, shape).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true, submitAttempts: 1, verifiedName: 'Ama Owusu' });
      // The holder changed: the name policy refuses. The token stays, the payout stays open for a person.
      account.holder('Esi Darko');
      expect(await s.pay(r), shape).toMatchObject({ outcome: 'conflict', state: 'SUBMITTING' });
      expect((await payoutOf(r))?.record, shape).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true });
      // Without the stored expected_name the request is not the one stored: a conflict before any
      // verification (the name policy the first request asked for cannot be dropped by a second).
      expect(await s.pay({ ...r, expected_name: undefined }), shape).toMatchObject({
        outcome: 'conflict',
        state: 'SUBMITTING',
        reason: 'expected_name differs from the stored payout of this identity',
      });
      expect(ledgerOf(h.sim, r.withdrawal_reference), shape).toBeUndefined();
      account.holder('Ama Owusu');
      expect(await s.pay(r), shape).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
      expect((await payoutOf(r))?.record.submitAttempts, shape).toBe(2);
      expect(ledgerOf(h.sim, r.withdrawal_reference), shape).toMatchObject({ calls: 1, executions: 1 });
    }
  });

  it('the first delayed check, landing on a reconciler bump of the fresh intent, only reschedules it: the withdrawal or the payment still applies, one call at most', async () => {
    for (const holder of ['Ama Owusu', 'Esi Darko']) {
      const account = ownAccount('Ama Owusu');
      const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
      // Verification and Payout each held until the test lets them go on.
      const verifying = heldCall();
      const calling = heldCall();
      const s = system({ provider: heldProvider({ verifyAccount: verifying, payout: calling }) });
      const paying = s.pay(r);
      await verifying.reached;
      // The create's intent; an order notification makes it due and the sweep reschedules it (a bump).
      const intent = await stored(r);
      expect(intent.state).toBe('SUBMITTING');
      await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
      await s.reconcile();
      // The worker schedules its first check for the version after its intent: here the sweep's bump.
      const check = await s.check(r, intent.version + 1);
      expect(check).toMatchObject({ outcome: 'checked', state: 'SUBMITTING', nextCheckAt: new Date(Date.parse(intent.record.submitIntentAt ?? '') + RECONCILE_SETTINGS.submitStaleMs).toISOString() });
      account.holder(holder);
      verifying.release();
      if (holder === 'Ama Owusu') {
        await calling.reached;
        calling.release();
        expect(await paying).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
        expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
      } else {
        expect(await paying).toMatchObject({ outcome: 'rejected', state: 'REJECTED' });
        expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
      }
      expect((await payoutOf(r))?.record.submitAttempts).toBe(1);
    }
  });

  it('a VERIFYING the code before this change left (its verification did not complete) gets its intent beside the verification: of two deliveries one pays, once; a refusal withdraws it', async () => {
    for (const holder of ['Ama Owusu', 'Esi Darko']) {
      const account = ownAccount(holder);
      const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
      const s = system();
      const now = s.clock.now();
      const accepted = Payout.accept(
        { identity: identityOf(r), amount: r.amount, accountMasked: maskAccount(r.account_number), accountCode: 'MTN', expectedName: r.expected_name },
        now,
      );
      await h.repository.createAccepted(accepted.startVerifying(now));
      const outcomes = (await Promise.all([s.pay(r), s.pay(r)])).map((x) => x.outcome).sort();
      if (holder === 'Ama Owusu') {
        expect(outcomes).toEqual(['skipped', 'submitted']);
        expect(await path(r)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED']);
        expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
      } else {
        expect(outcomes).toEqual(['rejected', 'skipped']);
        expect(await path(r)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'REJECTED']);
        expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
      }
      expect((await payoutOf(r))?.record.submitAttempts).toBe(1);
    }
  });

  it('a payout the code before this change left inside its Payout call (SUBMITTING, name stored, no token) is skipped by a refusing redelivery', async () => {
    const account = ownAccount('Ama Owusu');
    const r = request({ account_number: account.number, expected_name: 'Ama Owusu' });
    const s = system();
    const now = s.clock.now();
    const old = Payout.accept(
      { identity: identityOf(r), amount: r.amount, accountMasked: maskAccount(r.account_number), accountCode: 'MTN', expectedName: r.expected_name },
      now,
    )
      .startVerifying(now)
      .startSubmitting(now, 'Ama Owusu');
    await h.repository.createAccepted(old);
    account.holder('Esi Darko');
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped', state: 'SUBMITTING' });
    expect(await path(r)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING']);
  });
});

describe('Retry-After on 429/503 is honoured by the worker and the reconciler (simulator over HTTP)', () => {
  /** The real client, counting the GetPayout calls the reconciler makes. */
  function countingReads(): { provider: PayoutProvider; asked: string[] } {
    const asked: string[] = [];
    const provider: PayoutProvider = {
      verifyAccount: (body, creds) => client.verifyAccount(body, creds),
      payout: (body, creds) => client.payout(body, creds),
      getPayout: (identity, creds) => {
        asked.push(identity.withdrawal_reference);
        return client.getPayout(identity, creds);
      },
    };
    return { provider, asked };
  }

  it('AccountVerification 429: the retry carries the Retry-After and nothing is paid', async () => {
    const s = system();
    const r = request();
    h.sim.admin.setFaults('accountVerification', { errorRate: 1, errorStatus: 429, retryAfter: '40' });
    const error = await s.pay(r).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryLaterError);
    expect((error as RetryLaterError).retryAfterMs).toBe(40_000);
    // The intent, created beside the verification, is released with a retry token: nothing was sent.
    const released = await payoutOf(r);
    expect(released?.record).toMatchObject({ state: 'SUBMITTING', submitRetryAllowed: true, submitAttempts: 1 });
    expect(released?.record.verifiedName).toBeUndefined();
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toBeUndefined();
    // The retry, once the provider answers again, pays exactly once.
    h.sim.admin.clearFaults();
    expect(await s.pay(r)).toMatchObject({ outcome: 'submitted', state: 'SUBMITTED' });
    expect((await payoutOf(r))?.record.verifiedName).toBe('Kwame Mensah');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 1 });
  });

  it('Payout 429 is a refusal: UNKNOWN, GetPayout not asked before the Retry-After, then settled without a second Payout call', async () => {
    const reads = countingReads();
    const s = system({ reads: reads.provider });
    const r = request();
    h.sim.admin.setFaults('payout', { errorRate: 1, errorStatus: 429, retryAfter: '120', times: 1 });
    expect(await s.pay(r)).toMatchObject({ outcome: 'unknown', state: 'UNKNOWN' });
    const unknown = await payoutOf(r);
    expect(unknown?.record.refusedAt).toBeDefined();
    expect(unknown?.record.reason).toMatch(/HTTP 429/);
    expect(Date.parse(unknown?.record.nextCheckAt ?? '')).toBeGreaterThanOrEqual(s.clock.now().getTime() + 120_000);
    // An order notification makes it due at once: the reconciler still does not ask before the Retry-After.
    s.clock.advance(MINUTE);
    await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
    await s.reconcile();
    expect(reads.asked).not.toContain(r.withdrawal_reference);
    expect(Date.parse((await payoutOf(r))?.record.nextCheckAt ?? '')).toBeGreaterThanOrEqual(s.clock.now().getTime() + MINUTE);
    // Past it, GetPayout settles it: not found for the whole grace period after a refusal is FAILED.
    for (let i = 0; i < 8 && !(await payoutOf(r))?.isFinal; i++) {
      s.clock.advance(5 * MINUTE);
      await s.reconcile();
    }
    expect(reads.asked).toContain(r.withdrawal_reference);
    expect((await payoutOf(r))?.state).toBe('FAILED');
    expect(ledgerOf(h.sim, r.withdrawal_reference)).toMatchObject({ calls: 1, executions: 0 });
    // A redelivery of the request does not call Payout again.
    expect(await s.pay(r)).toMatchObject({ outcome: 'skipped' });
    expect(ledgerOf(h.sim, r.withdrawal_reference)?.calls).toBe(1);
  });

  it('GetPayout 429: the payout and every other due payout wait for the Retry-After (an HTTP date) before the next GetPayout', async () => {
    const reads = countingReads();
    const s = system({ reads: reads.provider, reconcile: { concurrency: 1 } });
    const [a, b] = [request(), request()];
    await s.pay(a);
    await s.pay(b);
    s.clock.advance(2 * MINUTE);
    const until = new Date(Date.now() + 10 * MINUTE).toUTCString();
    h.sim.admin.setFaults('getPayout', { errorRate: 1, errorStatus: 429, retryAfter: until });
    await s.reconcile();
    // One GetPayout got the 429; no other was asked in that run (later pages of due payouts stay due).
    expect(reads.asked).toHaveLength(1);
    const limited = await payoutOf(reads.asked[0] === a.withdrawal_reference ? a : b);
    expect(Date.parse(limited?.record.nextCheckAt ?? '')).toBeGreaterThanOrEqual(s.clock.now().getTime() + 9 * MINUTE);
    h.sim.admin.clearFaults();
    // A run before the Retry-After (the payouts made due by notifications) asks nothing.
    s.clock.advance(5 * MINUTE);
    for (const r of [a, b]) await h.repository.markDueNow(r.withdrawal_reference, s.clock.now());
    await s.reconcile();
    expect(reads.asked).toHaveLength(1);
    for (const r of [a, b]) expect((await payoutOf(r))?.state).toBe('SUBMITTED');
    // After it, both are asked and settle.
    s.clock.advance(10 * MINUTE);
    await s.reconcile();
    expect(reads.asked).toEqual(expect.arrayContaining([a.withdrawal_reference, b.withdrawal_reference]));
    for (const r of [a, b]) expect((await payoutOf(r))?.state).toBe('SUCCEEDED');
  });
});
