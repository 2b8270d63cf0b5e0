import { parseArgs } from 'node:util';
import { runChaos, type ChaosSummary } from './run-chaos';

/*
 * `npm run chaos -- --payouts 5000 --seed 1 [--json]`: the full-size chaos run (docs/reliability.md).
 * Exits 1 when any money-safety invariant broke, 2 on a usage error.
 */

const USAGE = `usage: npm run chaos -- [--payouts N] [--seed N] [--crash-rate R] [--duplicate-rate R] [--poison-rate R] [--pollers N] [--resubmit] [--log-level LEVEL] [--json]

Runs N payouts through the real worker and reconciler on local AWS and the simulator while faults
are injected (latency, 5xx, 429 with Retry-After, time-outs and resets after commit, refusals before
and after commit in any words, a flapping read side, duplicate deliveries, worker crashes at every
step boundary), then checks the money-safety invariants (Payout calls per reference included) and
prints a summary.

  --payouts N         payouts to run (default 1000)
  --seed N            seed of every random choice (default 1); the same seed replays the same plan
  --crash-rate R      share of payouts whose worker crashes once (default 0.06)
  --duplicate-rate R  share of messages sent twice (default 0.05)
  --poison-rate R     invalid messages added, as a share of payouts (default 0.01)
  --pollers N         concurrent SQS batches (default 3)
  --resubmit          RESUBMIT_UNKNOWN_NOT_FOUND on: payouts the provider does not know are
                      resubmitted once (the run enqueues them again) instead of going to review
  --log-level LEVEL   handler log level (default SILENT)
  --json              print the summary as JSON

example: npm run chaos -- --payouts 5000 --seed 1`;

function numberOption(value: string | undefined, name: string, fallback: number, integer: boolean): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed < 0 || (integer && !Number.isInteger(parsed))) {
    console.error(`--${name} must be a non-negative ${integer ? 'integer' : 'number'}, got "${value}"\n\n${USAGE}`);
    process.exit(2);
  }
  return parsed;
}

function table(summary: ChaosSummary): string {
  const rows: Array<[string, string]> = [
    ['seed', String(summary.seed)],
    ['payouts / poison messages', `${summary.payouts} / ${summary.poisonMessages}`],
    ['messages sent (with duplicates)', String(summary.messagesSent)],
    ...Object.entries(summary.finalStates)
      .sort()
      .map(([state, n]): [string, string] => [`final: ${state}`, String(n)]),
    ['dead letters (with reason) / only there', `${summary.deadLetters.total} (${summary.deadLetters.withReason}) / ${summary.deadLetters.only}`],
    ...Object.entries(summary.deadLetters.reasons).map(([reason, n]): [string, string] => [`  dead-letter reason`, `${n} x ${reason}`]),
    ['accepted = final + review + DLQ', `${summary.accepted} = ${summary.accountedFor}`],
    ['provider executions / max per reference', `${summary.ledger.executions} / ${summary.ledger.maxPerReference}`],
    ['Payout calls / max per reference', `${summary.safety.payoutCalls} / ${summary.safety.maxCallsPerReference}`],
    ['called twice (resubmission) / unexplained calls', `${summary.safety.calledMoreThanOnce} / ${summary.safety.unexplainedCalls}`],
    ['FAILED or REJECTED but delivered / lost', `${summary.safety.failedButDelivered} / ${summary.safety.lost}`],
    ...Object.entries(summary.review.reasons).map(([reason, n]): [string, string] => ['  NEEDS_REVIEW reason', `${n} x ${reason}`]),
    ...Object.entries(summary.review.payoutAnswers).map(([answer, n]): [string, string] => ['  NEEDS_REVIEW: its Payout call', `${n} x ${answer}`]),
    ...Object.entries(summary.review.settledAfterReview).map(([reason, n]): [string, string] => ['  settled after review', `${n} x ${reason}`]),
    ['NEEDS_REVIEW: provider status', Object.entries(summary.review.providerStatus).map(([status, n]) => `${status} ${n}`).join(', ') || '-'],
    ...Object.entries(summary.faults.simulator).map(([operation, kinds]): [string, string] => [
      `faults: ${operation}`,
      Object.entries(kinds)
        .map(([kind, n]) => `${kind} ${n}`)
        .join(', '),
    ]),
    ['faults: worker crashes', Object.entries(summary.faults.crashes).map(([b, n]) => `${b} ${n}`).join(', ')],
    ['faults: duplicate messages / redelivered records', `${summary.faults.duplicateMessages} / ${summary.faults.redeliveredRecords}`],
    ['reconcile runs / resubmissions', `${summary.reconcileRuns} / ${summary.resubmissions}`],
    ['time: workers / reconcile / total', `${(summary.timingsMs.workers / 1000).toFixed(1)} s / ${(summary.timingsMs.reconcile / 1000).toFixed(1)} s / ${(summary.timingsMs.total / 1000).toFixed(1)} s`],
    ['invariants', summary.violations.length === 0 ? 'all held' : `${summary.violations.length} BROKEN`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        payouts: { type: 'string' },
        seed: { type: 'string' },
        'crash-rate': { type: 'string' },
        'duplicate-rate': { type: 'string' },
        'poison-rate': { type: 'string' },
        pollers: { type: 'string' },
        resubmit: { type: 'boolean', default: false },
        'log-level': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const json = values.json === true;
  const summary = await runChaos({
    payouts: numberOption(values.payouts, 'payouts', 1000, true),
    seed: numberOption(values.seed, 'seed', 1, true),
    crashRate: numberOption(values['crash-rate'], 'crash-rate', 0.06, false),
    duplicateRate: numberOption(values['duplicate-rate'], 'duplicate-rate', 0.05, false),
    poisonRate: numberOption(values['poison-rate'], 'poison-rate', 0.01, false),
    pollers: numberOption(values.pollers, 'pollers', 3, true),
    resubmit: values.resubmit === true,
    ...(values['log-level'] ? { logLevel: values['log-level'] } : {}),
    progress: json ? undefined : (line) => console.error(line),
  });
  console.log(json ? JSON.stringify(summary, null, 2) : table(summary));
  if (summary.violations.length > 0) {
    if (!json) console.error(`\nbroken invariants (first 20):\n${summary.violations.slice(0, 20).join('\n')}`);
    process.exitCode = 1;
  }
}

await main();
