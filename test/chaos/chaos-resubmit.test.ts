import { beforeAll, describe, expect, it } from 'vitest';
import { runChaos, type ChaosSummary } from './run-chaos';

/*
 * Rule 1's one exception under chaos: with RESUBMIT_UNKNOWN_NOT_FOUND on, a payout the provider
 * positively does not know (a 5xx before commit, a crash between SUBMITTING and the call) is
 * resubmitted once with the same withdrawal_reference. Still never two executions, nothing lost.
 * The provider's faults are the same as in chaos.test.ts (refusals in any words, 429 with
 * Retry-After, a read side that forgets); a second Payout call is allowed only after the
 * reconciler saw an unbroken not-found run of the whole grace period.
 * One chaos run per process (the handler modules read their env once), hence its own file.
 */

const PAYOUTS = Number(process.env.PAYRELAY_CHAOS_PAYOUTS ?? '120');
const SEED = Number(process.env.PAYRELAY_CHAOS_SEED ?? '11');

describe(`chaos run with resubmission (${PAYOUTS} payouts, seed ${SEED})`, () => {
  let summary: ChaosSummary;

  beforeAll(async () => {
    summary = await runChaos({ payouts: PAYOUTS, seed: SEED, crashRate: 0.1, resubmit: true });
    console.info(`chaos summary (resubmit): ${JSON.stringify(summary)}`);
  }, 300_000);

  it('resubmitted payouts the provider did not know', () => {
    expect(summary.resubmissions).toBeGreaterThan(0);
  });

  it('holds every money-safety invariant: one execution at most, every payout final, every message accounted for', () => {
    expect(summary.violations).toEqual([]);
    expect(summary.ledger.maxPerReference).toBeLessThanOrEqual(1);
    expect(summary.accountedFor).toBe(summary.accepted);
  });

  it('called Payout a second time only for a resubmission after an unbroken not-found run; FAILED nothing delivered; lost nothing', () => {
    expect(summary.safety.unexplainedCalls).toBe(0);
    expect(summary.safety.calledMoreThanOnce).toBeLessThanOrEqual(summary.resubmissions);
    expect(summary.safety.failedButDelivered).toBe(0);
    expect(summary.safety.lost).toBe(0);
    expect(summary.review.settledAtProvider).toBe(0);
  });
});
