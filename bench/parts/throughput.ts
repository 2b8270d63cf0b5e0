import { performance } from 'node:perf_hooks';
import type { PayoutRequestInput } from '@shared/messages/payout-request';
import type { LedgerEntry } from '@simulator/index';
import { countHttpCalls } from '../lib/http-calls';
import { startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult } from '../lib/part';
import { ms, ratio, summarize } from '../lib/stats';
import { runWorkerBatches, type SqsHandler } from '../lib/worker-batches';

export const THROUGHPUT_TARGET = 0.9;

/** A seeded simulator account (Adaeze Okafor, 057 / 0123456789, NGN): verification answers its name. */
const ACCOUNT = { account_code: '057', account_number: '0123456789', expected_name: 'Adaeze Okafor', currency: 'NGN' };

export function payoutRequests(platformMerchantId: string, prefix: string, count: number): PayoutRequestInput[] {
  return Array.from({ length: count }, (_, i) => ({
    version: 1 as const,
    platform_merchant_id: platformMerchantId,
    currency: ACCOUNT.currency,
    withdrawal_reference: `${prefix}-${i}`,
    amount: '1500.00',
    account_number: ACCOUNT.account_number,
    account_code: ACCOUNT.account_code,
    expected_name: ACCOUNT.expected_name,
  }));
}

/** The worker handler against the simulator, with latency L on each provider call and WORKER_CONCURRENCY C. */
export interface WorkerRig {
  simulatorUrl: string;
  platformMerchantId: string;
  handler: SqsHandler;
  ledger(): Promise<LedgerEntry[]>;
  /** Runs the requests as consecutive SQS batches of `batchSize`; returns each invocation's duration (ms). */
  runBatches(requests: readonly PayoutRequestInput[], batchSize: number): Promise<number[]>;
  stop(): Promise<void>;
}

export async function startWorkerRig(options: { stage: string; latencyMs: number; concurrency: number; logLevel: string }): Promise<WorkerRig> {
  const emulators = await startHandlerEnv({
    stage: options.stage,
    logLevel: options.logLevel,
    simulator: { faults: { accountVerification: { latencyMs: options.latencyMs }, payout: { latencyMs: options.latencyMs } } },
    env: { WORKER_CONCURRENCY: String(options.concurrency) },
  });
  // Handlers read their configuration at module load: import only now.
  const worker = (await import('@functions/payout-worker')) as unknown as { handler: SqsHandler };
  return {
    simulatorUrl: emulators.simulatorUrl as string,
    platformMerchantId: emulators.provider.platform_merchant_id,
    handler: worker.handler,
    ledger: () => emulators.ledger(),
    runBatches: (requests, batchSize) => runWorkerBatches(worker.handler, requests, batchSize),
    stop: () => emulators.stop(),
  };
}

export const throughput: Part = async ({ options, progress }): Promise<PartResult> => {
  const { payouts: n, latencyMs: L, concurrency: C } = options;
  const rig = await startWorkerRig({ stage: 'bench-throughput', latencyMs: L, concurrency: C, logLevel: options.logLevel });
  try {
    const provider = countHttpCalls(new URL(rig.simulatorUrl).host);
    // Warm-up: connections, the cached secret, JIT. Not timed.
    await rig.runBatches(payoutRequests(rig.platformMerchantId, 'bench-warm', C * 2), C);
    provider.reset();
    const requests = payoutRequests(rig.platformMerchantId, 'bench-tp', n);
    progress(`throughput: ${n} payouts, L = ${L} ms, C = ${C}`);
    const started = performance.now();
    const durations = await rig.runBatches(requests, C);
    const seconds = (performance.now() - started) / 1000;
    const ledger = (await rig.ledger()).filter((e) => e.withdrawal_reference.startsWith('bench-tp-'));
    const paidTwice = ledger.filter((e) => e.executions !== 1).length;
    if (ledger.length !== n || paidTwice > 0) {
      throw new Error(`the simulator ledger holds ${ledger.length} of ${n} payouts (${paidTwice} not executed exactly once)`);
    }
    const rate = n / seconds;
    const bound = C / (2 * (L / 1000));
    const batch = summarize(durations);
    return {
      part: 'throughput',
      title: `3. Payout throughput (worker handler, SQS batches of ${C}, simulator latency ${L} ms per call)`,
      rows: [
        {
          metric: `payouts/s (N = ${n}, C = ${C}, L = ${L} ms)`,
          value: rate.toFixed(1),
          reference: `bound C/(2L) = ${bound.toFixed(1)}`,
          ratio: ratio(rate / bound),
          target: `>= ${THROUGHPUT_TARGET}x`,
          verdict: verdict(rate / bound >= THROUGHPUT_TARGET),
        },
        {
          metric: 'worker invocation (one batch), median (p99)',
          value: `${ms(batch.median)} (p99 ${ms(batch.p99)})`,
          reference: `2L = ${ms(2 * L)}`,
          ratio: ratio(batch.median / (2 * L)),
          verdict: 'info',
        },
        {
          metric: 'provider calls per payout',
          value: (provider.total() / n).toFixed(2),
          reference: 'AccountVerification + Payout = 2',
          verdict: 'info',
        },
      ],
      data: { n, latencyMs: L, concurrency: C, seconds, payoutsPerSecond: rate, bound, invocation: batch, providerCalls: provider.counts() },
      notes: [
        `The worker's own handler (functions/payout-worker.ts) invoked directly with SQS batch events of ${C} records (test/factories/sqs-events), one invocation after another as one Lambda instance would; no SQS polling. WORKER_CONCURRENCY = ${C}, so a batch runs all its records at once.`,
        `The simulator adds ${L} ms to every AccountVerification and Payout call (fault latencyMs). Each payout: 2 provider calls and 4 conditional writes to dynalite. Every payout was checked executed exactly once in the simulator ledger.`,
        'The bound C/(2L) counts only the provider latency; DynamoDB writes, logging and the wait for the slowest record of each batch are what the ratio loses.',
      ],
    };
  } finally {
    await rig.stop();
  }
};
