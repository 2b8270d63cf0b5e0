import { GetQueueAttributesCommand, SendMessageBatchCommand, type Message } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createLambdaContext, type LocalFunction } from '@local/lambda';
import { startLocalAws } from '@local/emulators';
import { startSqsPoller } from '@local/sqs-poller';
import { FUNCTIONS } from '@shared/config/functions';
import { REVERSAL_WATCH_MARK_KEY } from '@shared/config/resources';
import { FINAL_STATES, type PayoutHistoryEntry, type PayoutState } from '@shared/domain/payout';
import { FAILING_ACCOUNT, payableAccounts } from '@simulator/accounts';
import { startSimulator, type SimulatorOptions } from '@simulator/index';
import { REFUSAL_ANSWERS } from '@simulator/faults';
import { mulberry32, type Random } from '@simulator/prng';
import { CRASH_BOUNDARIES, installCrashInjector, type CrashBoundary } from './crash-injector';
import { PAYOUT_STATE_RANK } from '@test/support/payout-rank';
import { noTelemetry } from '@test/factories/ports';
import { takeAllMessages } from '@test/support/queues';

/*
 * The chaos run: payouts through the real worker handler (its SQS batches come from a real poll
 * loop on fauxqs that honours batchItemFailures and the redrive policy), the real reconcile use
 * case and the simulator, while the simulator injects latency, 5xx, time-outs and resets after
 * commit, messages are delivered twice, and workers crash at every step boundary. Then the
 * reconciler runs (its clock moved forward) until nothing moves, and the money-safety invariants
 * are checked. Everything random comes from the seed; only thread timing differs between runs.
 */

export interface ChaosOptions {
  readonly payouts: number;
  readonly seed: number;
  /** Share of payouts whose worker crashes at one boundary (spread evenly over the three). */
  readonly crashRate?: number;
  /** Share of messages sent twice. */
  readonly duplicateRate?: number;
  /** Share of poison messages (invalid requests) added on top of the payouts. */
  readonly poisonRate?: number;
  /** Concurrent SQS batches (pollers). */
  readonly pollers?: number;
  /**
   * RESUBMIT_UNKNOWN_NOT_FOUND on: the reconciler authorizes one resubmission of a payout the
   * provider positively does not know, and the run enqueues the original request again (as an
   * operator would). Default off, like the deployed setting.
   */
  readonly resubmit?: boolean;
  /** Powertools log level of the handlers (default SILENT: the summary is the output). */
  readonly logLevel?: string;
  /** Progress lines. */
  readonly progress?: (line: string) => void;
}

export interface ChaosSummary {
  readonly seed: number;
  readonly payouts: number;
  readonly poisonMessages: number;
  readonly messagesSent: number;
  /** Unique requests: payouts plus poison messages. */
  readonly accepted: number;
  readonly finalStates: Record<string, number>;
  readonly deadLetters: { total: number; withReason: number; only: number; reasons: Record<string, number> };
  /** final + review + dead-lettered without a payout record: must equal `accepted`. */
  readonly accountedFor: number;
  readonly ledger: { references: number; executions: number; maxPerReference: number };
  /**
   * The money-safety counts the run asserts: Payout calls per reference at the provider (every
   * request that named it, faults included), second calls and whether each followed an unbroken
   * not-found run, payouts FAILED or REJECTED that the provider delivered, payouts lost.
   */
  readonly safety: {
    readonly payoutCalls: number;
    readonly maxCallsPerReference: number;
    /** References called more than once; each must be a resubmission after an unbroken not-found run. */
    readonly calledMoreThanOnce: number;
    /** Calls beyond the first that no verified resubmission explains (must be 0). */
    readonly unexplainedCalls: number;
    /** FAILED or REJECTED payouts whose provider record says delivered (must be 0). */
    readonly failedButDelivered: number;
    /** Unique messages neither final, in review, nor in the DLQ with a reason (must be 0). */
    readonly lost: number;
  };
  /**
   * Why each NEEDS_REVIEW payout is there (the reason of its move, references and times left out)
   * and what the provider's ledger says about it at the end: NOT_CREATED (never committed: the
   * grace period ran out with nothing to find) or a word the provider never settled in the run's
   * time window. `settledAtProvider` counts those the provider has settled (COMPLETED, FAILED):
   * the review watch should have moved them, so it must be 0.
   */
  readonly review: {
    readonly reasons: Record<string, number>;
    /** How their Payout call ended: the reason of the move into UNKNOWN, or the state they left. */
    readonly payoutAnswers: Record<string, number>;
    /** Payouts that went to NEEDS_REVIEW and were settled later by the review watch, by the review's reason. */
    readonly settledAfterReview: Record<string, number>;
    readonly providerStatus: Record<string, number>;
    readonly settledAtProvider: number;
  };
  readonly faults: {
    simulator: Record<string, Record<string, number>>;
    crashes: Record<CrashBoundary, number>;
    duplicateMessages: number;
    redeliveredRecords: number;
  };
  readonly reconcileRuns: number;
  /** Requests enqueued again after the reconciler authorized a resubmission (`resubmit`). */
  readonly resubmissions: number;
  readonly timingsMs: { workers: number; reconcile: number; total: number };
  /** Broken invariants; empty when the run held every rule. */
  readonly violations: string[];
}


/** Seeded simulator accounts (docs/simulator.md) with their holders, GHS then NGN; FAILING_ACCOUNT always fails at settlement. */
const ACCOUNTS = payableAccounts(['GHS', 'NGN']);

/**
 * Payout refusals, before and after commit: the simulator's default set (words payrelay cannot know,
 * an empty body, an HTML page, a refusal with no message) plus a rate limit with a Retry-After.
 */
export const CHAOS_REFUSALS = [...REFUSAL_ANSWERS, { status: 429, body: '{"success":false,"message":"rate limit exceeded"}', retryAfter: '2' }];

/** The faults the simulator injects for the whole run (seeded rolls). */
export const CHAOS_FAULTS: SimulatorOptions['faults'] = {
  // Rate limited with a Retry-After: the worker delays the message's next delivery.
  accountVerification: { latencyMs: 2, errorRate: 0.04, errorStatus: 429, retryAfter: '1' },
  // Rates high enough that a 200-payout run injects every kind with near certainty (about 190 Payout calls).
  payout: {
    latencyMs: 5,
    errorRate: 0.06,
    retryAfter: '5',
    timeoutRate: 0.04,
    resetRate: 0.04,
    refusalRate: 0.04,
    refusalAfterCommitRate: 0.04,
    refusals: CHAOS_REFUSALS,
  },
  // 429 with Retry-After pauses every GetPayout; the read side flaps ("not found" after showing a payout).
  getPayout: {
    latencyMs: 2,
    errorRate: 0.02,
    errorStatus: 429,
    retryAfter: '30',
    timeoutRate: 0.02,
    resetRate: 0.02,
    gatewayErrorRate: 0.05,
    alternativeWordsRate: 0.2,
    flapRate: 0.05,
  },
};

const MERCHANT = 'chaos-merchant-1';
/**
 * The provider client's time-out. Short, so "commits, then never answers" costs little; not
 * shorter, because the simulator shares the event loop with the workers: at 400 ms a machine at
 * load 17 timed out every AccountVerification and no payout reached Payout.
 */
const PROVIDER_TIMEOUT_MS = 1000;
const GRACE_MS = 15 * 60_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Planned {
  body: string;
  reference: string;
  poison: boolean;
  duplicate: boolean;
  crash?: CrashBoundary;
}

function plan(options: ChaosOptions, random: Random): Planned[] {
  const crashRate = options.crashRate ?? 0.06;
  const duplicateRate = options.duplicateRate ?? 0.05;
  const poisonRate = options.poisonRate ?? 0.01;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const out: Planned[] = [];
  for (let i = 0; i < options.payouts; i++) {
    const reference = `CHAOS-${options.seed}-${String(i).padStart(5, '0')}`;
    const roll = random();
    const account = roll < 0.02 ? FAILING_ACCOUNT : pick(ACCOUNTS);
    const request: Record<string, unknown> = {
      version: 1,
      platform_merchant_id: MERCHANT,
      currency: account.currency,
      withdrawal_reference: reference,
      amount: `${1 + Math.floor(random() * 5000)}.${String(Math.floor(random() * 100)).padStart(2, '0')}`,
      account_number: account.account_number,
      account_code: account.account_code,
    };
    if (roll >= 0.02 && roll < 0.05) request.account_number = '0249999999'; // unknown to the provider
    else if (roll >= 0.05 && roll < 0.08) request.expected_name = 'Somebody Else Entirely';
    else if (random() < 0.3) request.expected_name = account.name;
    const crash = random() < crashRate ? pick(CRASH_BOUNDARIES) : undefined;
    out.push({ body: JSON.stringify(request), reference, poison: false, duplicate: random() < duplicateRate, ...(crash ? { crash } : {}) });
  }
  const poison = Math.round(options.payouts * poisonRate);
  for (let i = 0; i < poison; i++) {
    const reference = `CHAOS-${options.seed}-POISON-${i}`;
    const body =
      i % 2 === 0
        ? JSON.stringify({ version: 1, platform_merchant_id: MERCHANT, currency: 'GHS', withdrawal_reference: reference, amount: '-1', account_number: '0244123456', account_code: 'MTN' })
        : `{"withdrawal_reference":"${reference}", not json`;
    out.push({ body, reference, poison: true, duplicate: false });
  }
  // Shuffle, so poison and duplicates are spread through the queue.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as Planned, out[i] as Planned];
  }
  return out;
}

/** Drops Powertools metrics' "nothing to publish" warning (metrics are off here) from stderr; returns the undo. */
function muteEmptyMetricsWarnings(): () => void {
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('No application metrics to publish')) {
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  return () => {
    process.stderr.write = original;
  };
}

/** Runs the chaos scenario and returns its summary; never throws for a broken invariant (see `violations`). */
export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const started = Date.now();
  const unmute = muteEmptyMetricsWarnings();
  const progress = options.progress ?? (() => {});
  const random = mulberry32(options.seed);
  const planned = plan(options, random);
  const crashPlan = new Map(planned.filter((p) => p.crash).map((p) => [p.reference, p.crash as CrashBoundary]));

  const sim = await startSimulator({
    seed: options.seed,
    faults: CHAOS_FAULTS,
    // Pending for one status check, then settled; 3% of the rest fail at settlement.
    progression: { settleAfterChecks: 2, outcome: { failProbability: 0.03 } },
  });
  const partner = sim.admin.createPartner({ partner_code: 'CHAOS', email: 'chaos@payrelay.test', platform_merchant_id: MERCHANT });
  const aws = await startLocalAws({ stage: 'chaos', visibilityTimeoutSeconds: 3, maxReceiveCount: 5, secrets: { provider: { ...partner } } });
  Object.assign(process.env, aws.env, {
    PAYOUT_API_BASE_URL: sim.payoutBaseUrl,
    PROVIDER_TIMEOUT_MS: String(PROVIDER_TIMEOUT_MS),
    PAYOUTS_MAX_RECEIVE_COUNT: '5',
    WORKER_CONCURRENCY: '4',
    POWERTOOLS_LOG_LEVEL: options.logLevel ?? 'SILENT',
    POWERTOOLS_METRICS_DISABLED: 'true',
  });

  // Modules that read the env at load: only now.
  const { documentClient: documents, payoutItemWriter } = await import('@shared/adapters/dynamodb-client');
  const documentClient = documents();
  const sqsClient = (await import('@shared/adapters/sqs-client')).sqsClient();
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const { cachedSecret, providerSecretSchema } = await import('@shared/adapters/secrets');
  const { credentialsFromCachedSecret } = await import('@shared/adapters/credentials');
  const { createReconcilePayouts } = await import('@shared/app/reconcile-payouts');
  const { PayoutServiceClient } = await import('@shared/providers/payout-client');
  const { logger } = await import('@shared/observability/logger');
  const worker = (await import('@functions/payout-worker')) as { handler: (e: SQSEvent, c: Context) => Promise<SQSBatchResponse> };

  // Before any payout write: the item writer resolves its middleware once, at its first PutItem.
  const injector = installCrashInjector([documentClient, payoutItemWriter()], aws.names.payoutsTable, (reference) => crashPlan.get(reference));
  const region = aws.env.AWS_REGION as string;
  const workerFn: LocalFunction = {
    definition: FUNCTIONS.payoutWorker,
    name: 'payrelay-chaos-payout-worker',
    invoke: <R>(event: unknown) =>
      injector.invoke(() => worker.handler(event as SQSEvent, createLambdaContext(FUNCTIONS.payoutWorker, 'payrelay-chaos-payout-worker', region))) as Promise<R>,
  };

  // The reconciler's clock can be moved forward, so grace periods and review deadlines pass in seconds.
  let offsetMs = 0;
  const reconcile = createReconcilePayouts({
    repository: createPayoutRepository(aws.names.payoutsTable),
    provider: new PayoutServiceClient({ baseUrl: sim.payoutBaseUrl, timeoutMs: PROVIDER_TIMEOUT_MS }),
    credentials: credentialsFromCachedSecret(cachedSecret(aws.names.providerSecret, providerSecretSchema)),
    clock: { now: () => new Date(Date.now() + offsetMs) },
    telemetry: noTelemetry,
    log: logger,
    settings: {
      reviewAfterMs: 24 * 60 * 60_000,
      notFoundGraceMs: GRACE_MS,
      resubmitUnknownNotFound: options.resubmit ?? false,
      submitStaleMs: 5 * 60_000,
      concurrency: 8,
      pageSize: 100,
      budgetMs: 10 * 60_000,
    },
  });

  const violations: string[] = [];
  let reconcileRuns = 0;
  let resubmissions = 0;
  /**
   * Authorized resubmissions, per reference, each checked to follow an unbroken not-found run of the
   * grace period, and each counted once: an authorization is known by the start of its not-found run
   * (spending it starts a new call, which ends the run), however many reconcile runs still see it.
   */
  const resubmittedAfterNotFound = new Map<string, Set<string>>();
  let duplicateMessages = 0;
  let workersMs = 0;
  let reconcileMs = 0;
  try {
    // Send every message (the duplicates twice) in batches of 10.
    const sends: string[] = [];
    for (const p of planned) {
      sends.push(p.body);
      if (p.duplicate) {
        sends.push(p.body);
        duplicateMessages += 1;
      }
    }
    await enqueue(sends);
    progress(`enqueued ${sends.length} messages (${planned.length} unique, ${duplicateMessages} sent twice, ${crashPlan.size} planned crashes)`);

    // Workers, with the reconciler running beside them at the real time.
    const workersStarted = Date.now();
    const redeliveredRecords = await drainQueue(true);
    workersMs = Date.now() - workersStarted;

    // The reconciler alone, an hour later each run (or, when the provider asked to wait, right after
    // its Retry-After, as the next scheduled run would), until nothing is open.
    const reconcileStarted = Date.now();
    let pausedUntil: string | undefined;
    for (let run = 0; run < 400; run++) {
      offsetMs = pausedUntil ? Math.max(offsetMs, Date.parse(pausedUntil) + 1000 - Date.now()) : offsetMs + 61 * 60_000;
      const summary = await reconcile();
      pausedUntil = summary.providerPausedUntil;
      reconcileRuns += 1;
      let open = await countOpen();
      progress(`reconcile +${Math.round(offsetMs / 3_600_000)} h: read ${summary.read}, moved ${JSON.stringify(summary.transitions)}, ${open} open`);
      if (options.resubmit) {
        // The operator enqueues the original request of every payout with an authorized resubmission.
        const authorizedItems = (await scanPayouts()).filter((i) => i.resubmit_authorized === true);
        const now = Date.now() + offsetMs;
        for (const item of authorizedItems) {
          const reference = String(item.withdrawal_reference);
          const run = item.not_found_since === undefined ? 0 : now - Date.parse(String(item.not_found_since));
          // Rule 1's one exception: never acknowledged, and "not found" without a break for the whole grace period.
          if (item.acknowledged_at !== undefined || run < GRACE_MS) {
            violations.push(`${reference}: resubmission authorized without an unbroken not-found run (acknowledged ${String(item.acknowledged_at)}, run ${run} ms)`);
          } else {
            resubmittedAfterNotFound.set(reference, (resubmittedAfterNotFound.get(reference) ?? new Set()).add(String(item.not_found_since)));
          }
        }
        const authorized = authorizedItems.map((i) => String(i.withdrawal_reference));
        const bodies = authorized.map((reference) => planned.find((p) => p.reference === reference)?.body).filter((b): b is string => b !== undefined);
        if (bodies.length > 0) {
          await enqueue(bodies);
          resubmissions += bodies.length;
          await drainQueue(false);
          open = await countOpen();
          progress(`resubmitted ${bodies.length}; ${open} open`);
        }
      }
      // A NEEDS_REVIEW payout the provider created (a gateway-error review) is settled by the review
      // watch's hourly look once the provider settles it: the run waits for that, as time would.
      if (open === 0 && Object.keys(summary.transitions).length === 0 && (await reviewsTheProviderHolds()) === 0) break;
    }
    reconcileMs = Date.now() - reconcileStarted;

    // Collect.
    const items = await scanPayouts();
    const deadLetters = await takeAllMessages(sqsClient, aws.queueUrls.deadLetter);
    const ledger = sim.admin.ledger();

    // Invariant 1: at most one execution per withdrawal_reference.
    for (const entry of ledger) {
      if (entry.executions > 1) violations.push(`${entry.withdrawal_reference} executed ${entry.executions} times`);
    }
    // Invariant 2: every payout final or in NEEDS_REVIEW.
    const finalStates: Record<string, number> = {};
    const byReference = new Map<string, Record<string, unknown>>();
    for (const item of items) {
      const state = item.state as PayoutState;
      finalStates[state] = (finalStates[state] ?? 0) + 1;
      byReference.set(String(item.withdrawal_reference), item);
      if (!FINAL_STATES.has(state)) violations.push(`${String(item.withdrawal_reference)} is still ${state}`);
      // Invariant 4: history only moves forward, as one chain ending in the current state.
      const history = item.history as PayoutHistoryEntry[];
      if (history[0]?.from !== null || history[0]?.to !== 'ACCEPTED') violations.push(`${String(item.withdrawal_reference)}: history does not start at ACCEPTED`);
      for (let i = 1; i < history.length; i++) {
        const move = history[i] as PayoutHistoryEntry;
        if (move.from !== history[i - 1]?.to || PAYOUT_STATE_RANK[move.to] <= PAYOUT_STATE_RANK[move.from]) {
          violations.push(`${String(item.withdrawal_reference)}: history moves ${move.from} -> ${move.to}`);
        }
      }
      if (history[history.length - 1]?.to !== state) violations.push(`${String(item.withdrawal_reference)}: history ends elsewhere than ${state}`);
    }
    // Invariant 3: accepted = final + review + dead-lettered (with a reason).
    let failedButDelivered = 0;
    let lost = 0;
    const deadByReference = new Map<string, Message[]>();
    let withReason = 0;
    const reasons: Record<string, number> = {};
    for (const message of deadLetters) {
      // Reasons grouped by their wording (references, counts and quoted values left out).
      const reason = (message.MessageAttributes?.reason?.StringValue ?? '(none)').replace(/"[^"]*"|\d+/g, '…').slice(0, 80);
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      const reference = /"withdrawal_reference":"([^"]+)"/.exec(message.Body ?? '')?.[1] ?? '(unreadable)';
      deadByReference.set(reference, [...(deadByReference.get(reference) ?? []), message]);
      if ((message.MessageAttributes?.reason?.StringValue ?? '') !== '') withReason += 1;
    }
    let deadOnly = 0;
    for (const p of planned) {
      const item = byReference.get(p.reference);
      if (item && FINAL_STATES.has(item.state as PayoutState)) continue;
      const dead = deadByReference.get(p.reference) ?? [];
      if (dead.some((m) => (m.MessageAttributes?.reason?.StringValue ?? '') !== '')) {
        deadOnly += 1;
        continue;
      }
      lost += 1;
      violations.push(`${p.reference} is lost: ${item ? `payout ${String(item.state)}` : 'no payout'}, ${dead.length} dead letters without a reason`);
    }
    const finals = items.filter((i) => FINAL_STATES.has(i.state as PayoutState)).length;
    const accepted = planned.length;
    if (finals + deadOnly !== accepted) violations.push(`accepted ${accepted} != final+review ${finals} + dead-lettered ${deadOnly}`);
    // Cross-check with the provider: what we call paid was paid once; what we call refused never ran.
    for (const entry of ledger) {
      const item = byReference.get(entry.withdrawal_reference);
      if (entry.executions === 0) continue;
      if (!item) violations.push(`${entry.withdrawal_reference} was executed but payrelay has no payout`);
      else if ((item.state === 'FAILED' || item.state === 'REJECTED') && entry.status === 'COMPLETED') {
        failedButDelivered += 1;
        violations.push(`${entry.withdrawal_reference} is ${String(item.state)} but the provider delivered it`);
      } else if (item.state === 'REJECTED') violations.push(`${entry.withdrawal_reference} was executed but is REJECTED`);
      else if (item.state === 'SUCCEEDED' && entry.status !== 'COMPLETED') violations.push(`${entry.withdrawal_reference} is SUCCEEDED but the provider says ${entry.status}`);
      else if (item.state === 'FAILED' && entry.status !== 'FAILED') violations.push(`${entry.withdrawal_reference} is FAILED but the provider says ${entry.status}`);
    }
    // Payout calls: at most one per reference, plus one per verified resubmission.
    let unexplainedCalls = 0;
    let calledMoreThanOnce = 0;
    for (const entry of ledger) {
      if (entry.calls <= 1) continue;
      calledMoreThanOnce += 1;
      const allowed = 1 + (resubmittedAfterNotFound.get(entry.withdrawal_reference)?.size ?? 0);
      if (entry.calls > allowed) {
        unexplainedCalls += entry.calls - allowed;
        violations.push(`${entry.withdrawal_reference}: ${entry.calls} Payout calls, ${allowed - 1} resubmissions after an unbroken not-found run`);
      }
    }
    for (const item of items) {
      const executed = ledger.find((e) => e.withdrawal_reference === item.withdrawal_reference)?.executions ?? 0;
      if (item.state === 'SUCCEEDED' && executed !== 1) violations.push(`${String(item.withdrawal_reference)} is SUCCEEDED with ${executed} executions`);
    }
    // NEEDS_REVIEW, explained: why each is there and what the provider says about it now.
    const review = {
      reasons: {} as Record<string, number>,
      payoutAnswers: {} as Record<string, number>,
      settledAfterReview: {} as Record<string, number>,
      providerStatus: {} as Record<string, number>,
      settledAtProvider: 0,
    };
    const words = (reason: string | undefined): string => (reason ?? '(none)').replace(/\d[\d:.TZ-]*/g, '…').slice(0, 120);
    for (const item of items.filter((i) => i.state !== 'NEEDS_REVIEW')) {
      const reviewed = (item.history as PayoutHistoryEntry[]).find((h) => h.to === 'NEEDS_REVIEW');
      if (reviewed) review.settledAfterReview[words(reviewed.reason)] = (review.settledAfterReview[words(reviewed.reason)] ?? 0) + 1;
    }
    for (const item of items.filter((i) => i.state === 'NEEDS_REVIEW')) {
      const history = item.history as PayoutHistoryEntry[];
      const reason = words(history.findLast((h) => h.to === 'NEEDS_REVIEW')?.reason);
      review.reasons[reason] = (review.reasons[reason] ?? 0) + 1;
      const unknown = history.find((h) => h.to === 'UNKNOWN');
      const answer = unknown ? words(unknown.reason) : `no Payout answer recorded (left ${history.at(-2)?.to ?? '?'})`;
      review.payoutAnswers[answer] = (review.payoutAnswers[answer] ?? 0) + 1;
      const status = ledger.find((e) => e.withdrawal_reference === item.withdrawal_reference)?.status ?? 'NOT_CREATED';
      review.providerStatus[status] = (review.providerStatus[status] ?? 0) + 1;
      if (status === 'COMPLETED' || status === 'FAILED') {
        review.settledAtProvider += 1;
        violations.push(`${String(item.withdrawal_reference)} stayed NEEDS_REVIEW while the provider says ${status}`);
      }
    }

    const faultCounts = sim.admin.faults().counts as Record<string, Record<string, number>>;
    return {
      seed: options.seed,
      payouts: options.payouts,
      poisonMessages: planned.filter((p) => p.poison).length,
      messagesSent: sends.length,
      accepted,
      finalStates,
      deadLetters: { total: deadLetters.length, withReason, only: deadOnly, reasons },
      accountedFor: finals + deadOnly,
      ledger: {
        references: ledger.length,
        executions: ledger.reduce((n, e) => n + e.executions, 0),
        maxPerReference: ledger.reduce((n, e) => Math.max(n, e.executions), 0),
      },
      safety: {
        payoutCalls: ledger.reduce((n, e) => n + e.calls, 0),
        maxCallsPerReference: ledger.reduce((n, e) => Math.max(n, e.calls), 0),
        calledMoreThanOnce,
        unexplainedCalls,
        failedButDelivered,
        lost,
      },
      review,
      faults: { simulator: faultCounts, crashes: { ...injector.counts }, duplicateMessages, redeliveredRecords },
      reconcileRuns,
      resubmissions,
      timingsMs: { workers: workersMs, reconcile: reconcileMs, total: Date.now() - started },
      violations,
    };
  } finally {
    await sim.stop();
    await aws.stop();
    unmute();
  }

  async function enqueue(bodies: readonly string[]): Promise<void> {
    for (let i = 0; i < bodies.length; i += 10) {
      const chunk = bodies.slice(i, i + 10);
      const out = await sqsClient.send(
        new SendMessageBatchCommand({ QueueUrl: aws.queueUrls.payouts, Entries: chunk.map((body, j) => ({ Id: String(j), MessageBody: body })) }),
      );
      if ((out.Failed ?? []).length > 0) throw new Error(`could not enqueue ${out.Failed?.length} chaos messages`);
    }
  }

  /**
   * Runs the workers (the poll loop on the payouts queue) until the queue stays empty, with the
   * reconciler beside them when `withReconciler`; returns how many records were left for redelivery.
   */
  async function drainQueue(withReconciler: boolean): Promise<number> {
    const poller = await startSqsPoller({ sqs: sqsClient, queueUrl: aws.queueUrls.payouts, fn: workerFn, region, batchSize: 10, waitSeconds: 1, concurrency: options.pollers ?? 3 });
    let done = false;
    const background = (async () => {
      while (withReconciler && !done) {
        await reconcile();
        reconcileRuns += 1;
        await sleep(1000);
      }
    })();
    let idleChecks = 0;
    let lastReport = 0;
    const deadline = Date.now() + Math.max(300_000, options.payouts * 400);
    while (idleChecks < 3) {
      await sleep(1000);
      const attributes = await sqsClient.send(
        new GetQueueAttributesCommand({ QueueUrl: aws.queueUrls.payouts, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
      );
      const waiting = Number(attributes.Attributes?.ApproximateNumberOfMessages ?? '0');
      const inFlight = Number(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible ?? '0');
      idleChecks = waiting === 0 && inFlight === 0 ? idleChecks + 1 : 0;
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        progress(`workers: ${poller.stats.batches} batches, ${poller.stats.deleted} done, ${poller.stats.failed} left for redelivery; queue ${waiting} waiting, ${inFlight} in flight`);
      }
      if (Date.now() > deadline) {
        violations.push(`the queue did not drain in time (${waiting} waiting, ${inFlight} in flight)`);
        break;
      }
    }
    done = true;
    await poller.stop();
    await background;
    return poller.stats.failed;
  }

  async function scanPayouts(): Promise<Array<Record<string, unknown>>> {
    const all: Array<Record<string, unknown>> = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await documentClient.send(new ScanCommand({ TableName: aws.names.payoutsTable, ExclusiveStartKey: start, ConsistentRead: true }));
      // Every item but the reconciler's reversal-watch watermark, which is not a payout.
      all.push(...(page.Items ?? []).filter((item) => item.pk !== REVERSAL_WATCH_MARK_KEY));
      start = page.LastEvaluatedKey;
    } while (start);
    return all;
  }

  async function reviewsTheProviderHolds(): Promise<number> {
    const executed = new Set(sim.admin.ledger().filter((e) => e.executions > 0).map((e) => e.withdrawal_reference));
    return (await scanPayouts()).filter((i) => i.state === 'NEEDS_REVIEW' && executed.has(String(i.withdrawal_reference))).length;
  }

  async function countOpen(): Promise<number> {
    return (await scanPayouts()).filter((i) => !FINAL_STATES.has(i.state as PayoutState)).length;
  }

}
