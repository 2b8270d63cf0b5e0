import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { createProcessPayout } from '@shared/app/process-payout';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import type { PayoutCheckQueue, PayoutProvider } from '@shared/ports/payouts';
import { testFingerprints } from '@test/factories/ports';
import type { Clock } from '@shared/ports/runtime';
import { RECONCILE_DEFAULTS, createReconciler } from '@shared/app/reconcile-payouts';
import { SUBMITTED_CHECK_SECONDS } from '@shared/domain/payout';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { payoutCheck, type PayoutCheck } from '@shared/messages/payout-check';
import { payoutRequestSchema } from '@shared/messages/payout-request';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { startLocalAws } from '@local/emulators';
import { mulberry32 } from '@simulator/prng';
import { startSimulator } from '@simulator/index';
import { verdict, type Part, type PartResult, type Row } from '../lib/part';
import { quantile } from '../lib/stats';
import { payoutRequests } from './throughput';
import * as v from '@shared/validation/valibot';

export const TIME_TO_FINAL_TARGET_SECONDS = 60;
export const GET_PAYOUT_CALLS_TARGET = 6;

/** Provider settle times of the issue: 5 s, 60 s and 10 min after the payout is accepted. */
const SETTLE_SECONDS = [5, 60, 600] as const;
const SWEEP_EVERY_MS = 60_000;
const MINUTE = 60_000;

interface ScenarioResult {
  settleSeconds: number;
  payouts: number;
  p50Seconds: number;
  p95Seconds: number;
  maxSeconds: number;
  getPayoutCallsPerPayout: number;
  finalBySweep: number;
}

type Event =
  | { at: number; kind: 'submit'; index: number }
  | { at: number; kind: 'settle'; index: number }
  | { at: number; kind: 'check'; check: PayoutCheck }
  | { at: number; kind: 'sweep' };

/**
 * Time from the provider settling a payout to payrelay recording it final, with no order
 * notification: the real use cases (worker, delayed checker, scheduled sweep) on dynalite, GetPayout
 * over HTTP from the simulator, under a simulated clock. Delayed SQS messages are an in-process
 * event queue: a check becomes visible at its DelaySeconds plus a uniform 0 to 1 s of delivery lag.
 */
export const timeToFinal: Part = async ({ options, progress }): Promise<PartResult> => {
  const n = options.finalPayouts;
  // The simulator never settles on its own here (20 days: its timers take at most 2^31 ms); the part settles each payout at its settle time.
  const sim = await startSimulator({ progression: { settleAfterMs: 20 * 24 * 3600 * 1000 } });
  const partner = sim.admin.createPartner({ partner_code: 'bench-final', email: 'final@example.test' });
  const aws = await startLocalAws({ stage: 'bench-final', secrets: { provider: { ...partner }, kyc: undefined } });
  Object.assign(process.env, aws.env);
  const client = new PayoutServiceClient({ baseUrl: sim.payoutBaseUrl, timeoutMs: 5000 });
  try {
    const results: ScenarioResult[] = [];
    for (const settleSeconds of SETTLE_SECONDS) {
      const random = mulberry32(settleSeconds);
      let t = Date.parse('2026-06-01T00:00:00.000Z');
      const clock: Clock = { now: () => new Date(t) };
      const queue: Event[] = [];
      const push = (event: Event): void => {
        queue.push(event);
        queue.sort((a, b) => a.at - b.at);
      };
      // SQS DelaySeconds are whole seconds (the adapter rounds up); delivery adds 0 to 1 s.
      const checks: PayoutCheckQueue = {
        schedule: async (identity, version, delaySeconds) =>
          push({ at: t + Math.ceil(delaySeconds) * 1000 + random() * 1000, kind: 'check', check: payoutCheck(identity, version) }),
      };
      const calls = new Map<string, number>();
      const provider: PayoutProvider = {
        verifyAccount: (req, creds) => client.verifyAccount(req, creds),
        payout: (req, creds) => client.payout(req, creds),
        getPayout: (identity: PayoutIdentity, creds) => {
          calls.set(payoutKey(identity), (calls.get(payoutKey(identity)) ?? 0) + 1);
          return client.getPayout(identity, creds);
        },
      };
      const repository = createPayoutRepository(aws.names.payoutsTable);
      const credentials = credentialsFromCachedSecret({ get: async () => partner });
      const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
      const telemetry = { count: () => undefined, seconds: () => undefined };
      const settings = { reviewAfterMs: 1440 * MINUTE, notFoundGraceMs: 15 * MINUTE, resubmitUnknownNotFound: false, ...RECONCILE_DEFAULTS };
      const common = { repository, provider, credentials, clock, telemetry, log: silent };
      const pay = createProcessPayout({ ...common, checks, fingerprints: testFingerprints, settings: { nameMatchThreshold: 0.85, kycGating: false } });
      const reconciler = createReconciler({ ...common, checks, settings });

      const requests = payoutRequests(partner.platform_merchant_id, `final-${settleSeconds}-${Date.now().toString(36)}`, n);
      const identities = requests.map((r) => ({ platform_merchant_id: r.platform_merchant_id, currency: r.currency, withdrawal_reference: r.withdrawal_reference }));
      const settledAt = new Map<number, number>();
      const finalAt = new Map<number, number>();
      let finalBySweep = 0;
      const start = t;
      // Payouts arrive over two sweep periods, so they fall at every phase of the schedule.
      requests.forEach((_, index) => push({ at: start + random() * 2 * SWEEP_EVERY_MS, kind: 'submit', index }));
      for (let k = 1; k * SWEEP_EVERY_MS <= (settleSeconds + 3 * 3600) * 1000; k += 1) push({ at: start + k * SWEEP_EVERY_MS, kind: 'sweep' });

      const indexOf = new Map(identities.map((identity, index) => [payoutKey(identity), index]));
      /** Records the payouts (all, or the one checked) that the last step made final. */
      const noteFinal = async (by: 'check' | 'sweep', only?: PayoutIdentity): Promise<void> => {
        for (const [index, identity] of identities.entries()) {
          if (only !== undefined && indexOf.get(payoutKey(only)) !== index) continue;
          if (finalAt.has(index) || !settledAt.has(index)) continue;
          const payout = await repository.get(identity);
          if (payout?.isFinal) {
            finalAt.set(index, t);
            if (by === 'sweep') finalBySweep += 1;
          }
        }
      };
      while (queue.length > 0 && finalAt.size < n) {
        const event = queue.shift() as Event;
        t = Math.max(t, event.at);
        if (event.kind === 'submit') {
          await pay(v.parse(payoutRequestSchema, requests[event.index]));
          push({ at: t + settleSeconds * 1000, kind: 'settle', index: event.index });
        } else if (event.kind === 'settle') {
          sim.admin.settlePayout(identities[event.index] as PayoutIdentity, 'succeeded');
          settledAt.set(event.index, t);
        } else if (event.kind === 'check') {
          await reconciler.check(event.check);
          await noteFinal('check', event.check);
        } else {
          await reconciler.sweep();
          await noteFinal('sweep');
        }
      }
      const lags = [...finalAt].map(([index, at]) => (at - (settledAt.get(index) as number)) / 1000);
      const totalCalls = identities.reduce((sum, identity) => sum + (calls.get(payoutKey(identity)) ?? 0), 0);
      if (lags.length < n) throw new Error(`settle ${settleSeconds} s: only ${lags.length} of ${n} payouts became final`);
      results.push({
        settleSeconds,
        payouts: n,
        p50Seconds: quantile(lags, 0.5),
        p95Seconds: quantile(lags, 0.95),
        maxSeconds: Math.max(...lags),
        getPayoutCallsPerPayout: totalCalls / n,
        finalBySweep,
      });
      progress(`time-to-final: settle ${settleSeconds} s: p95 ${quantile(lags, 0.95).toFixed(1)} s, ${(totalCalls / n).toFixed(2)} GetPayout calls per payout`);
    }

    const rows: Row[] = [];
    for (const r of results) {
      const label = r.settleSeconds >= 60 ? `${r.settleSeconds / 60} min` : `${r.settleSeconds} s`;
      rows.push({
        metric: `settles after ${label}: time to final p50; p95 (max)`,
        value: `${r.p50Seconds.toFixed(1)} s; ${r.p95Seconds.toFixed(1)} s (${r.maxSeconds.toFixed(1)} s)`,
        ...(r.settleSeconds === 60
          ? { target: `p95 <= ${TIME_TO_FINAL_TARGET_SECONDS} s`, verdict: verdict(r.p95Seconds <= TIME_TO_FINAL_TARGET_SECONDS) }
          : { verdict: 'info' as const }),
      });
      rows.push({
        metric: `settles after ${label}: GetPayout calls per payout`,
        value: `${r.getPayoutCallsPerPayout.toFixed(2)}${r.finalBySweep > 0 ? ` (${r.finalBySweep} of ${r.payouts} made final by the sweep)` : ''}`,
        target: `<= ${GET_PAYOUT_CALLS_TARGET}`,
        verdict: verdict(r.getPayoutCallsPerPayout <= GET_PAYOUT_CALLS_TARGET),
      });
    }
    const sixty = results.find((r) => r.settleSeconds === 60);
    const allCalls = results.reduce((sum, r) => sum + r.getPayoutCallsPerPayout, 0) / results.length;
    rows.push({
      metric: 'all settle times: GetPayout calls per payout (mean)',
      value: allCalls.toFixed(2),
      target: `<= ${GET_PAYOUT_CALLS_TARGET}`,
      verdict: verdict(allCalls <= GET_PAYOUT_CALLS_TARGET),
    });
    return {
      part: 'time-to-final',
      title: '9. Time to final with no order notification (simulated clock)',
      rows,
      data: { checkScheduleSeconds: SUBMITTED_CHECK_SECONDS, sweepEverySeconds: SWEEP_EVERY_MS / 1000, results },
      // GetPayout calls: the mean over every payout of the three settle times (each group has n).
      summary: { timeToFinalP95Seconds: sixty?.p95Seconds, getPayoutCallsPerPayout: allCalls },
      notes: [
        `${n} payouts per settle time, arriving at random over two minutes. The worker, the delayed checker and the scheduled sweep are the real use cases (shared/app) on dynalite, asking the simulator over HTTP; only the clock is simulated, so minutes pass in seconds.`,
        `Each payout settles (simulator admin) exactly its settle time after the worker's Payout call, and no order notification is sent. Delayed checks run at ${SUBMITTED_CHECK_SECONDS.join(', ')} s after the payout intent (then hourly, from the sweep); each becomes visible after its DelaySeconds plus a uniform 0 to 1 s (SQS delivery and polling). The sweep runs every minute as the scheduled reconciler does.`,
        'Time to final = the simulated time of the write that made the payout final minus its settle time. GetPayout calls are counted per payout at the provider port; the summary key getPayoutCallsPerPayout is the mean over all three settle times, timeToFinalP95Seconds the 60 s one.',
      ],
    };
  } finally {
    client.close();
    await aws.stop();
    await sim.stop();
  }
};
