import { beforeAll, describe, expect, it } from 'vitest';
import { runChaos, type ChaosSummary } from './run-chaos';

/*
 * The bounded chaos run of `npm test` (the full size is `npm run chaos -- --payouts 5000`): real
 * worker handler and reconciler on dynalite, fauxqs and the simulator, with latency, 5xx and 429
 * with Retry-After, time-outs and resets after commit, refusals before and after commit in any
 * words, a read side that forgets, duplicate deliveries and worker crashes at every boundary.
 * PAYRELAY_CHAOS_PAYOUTS and PAYRELAY_CHAOS_SEED change the size and the plan.
 */

const PAYOUTS = Number(process.env.PAYRELAY_CHAOS_PAYOUTS ?? '200');
const SEED = Number(process.env.PAYRELAY_CHAOS_SEED ?? '7');

describe(`chaos run (${PAYOUTS} payouts, seed ${SEED})`, () => {
  let summary: ChaosSummary;

  beforeAll(async () => {
    // Enough crashes that every boundary is hit even in a small run.
    summary = await runChaos({ payouts: PAYOUTS, seed: SEED, crashRate: 0.1 });
    console.info(`chaos summary: ${JSON.stringify(summary)}`);
  }, 300_000);

  it('injected every kind of fault the proof is about', () => {
    const f = summary.faults;
    for (const boundary of ['before-submitting', 'after-submitting', 'after-payout-call'] as const) {
      expect(f.crashes[boundary], `no crash ${boundary}`).toBeGreaterThan(0);
    }
    expect(f.duplicateMessages).toBeGreaterThan(0);
    expect(f.simulator.payout?.timeout ?? 0).toBeGreaterThan(0);
    expect(f.simulator.payout?.reset ?? 0).toBeGreaterThan(0);
    expect(f.simulator.payout?.error ?? 0).toBeGreaterThan(0);
    expect(f.simulator.payout?.latency ?? 0).toBeGreaterThan(0);
    // The provider's harder faults: refusals before and after commit in any words (bad input included), 429
    // with Retry-After on AccountVerification and GetPayout, a read side that forgets shown payouts.
    expect(f.simulator.payout?.refusal ?? 0).toBeGreaterThan(0);
    expect(f.simulator.payout?.refusalAfterCommit ?? 0).toBeGreaterThan(0);
    expect(f.simulator.accountVerification?.error ?? 0).toBeGreaterThan(0);
    expect(f.simulator.getPayout?.error ?? 0).toBeGreaterThan(0);
    expect(f.simulator.getPayout?.flap ?? 0).toBeGreaterThan(0);
    // GATEWAY_ERROR for a payout still pending 2 hours after acceptance: its own, shorter review window.
    expect(Object.keys(summary.review.settledAfterReview).filter((reason) => /GATEWAY_ERROR \(a gateway error\)/.test(reason))).not.toEqual([]);
  });

  it('made at most one Payout call per reference, FAILED or REJECTED nothing the provider delivered, and lost nothing', () => {
    expect(summary.safety.maxCallsPerReference).toBe(1);
    expect(summary.safety.unexplainedCalls).toBe(0);
    expect(summary.safety.failedButDelivered).toBe(0);
    expect(summary.safety.lost).toBe(0);
  });

  it('explains every NEEDS_REVIEW: a payout the provider never created (its grace period ran out, resubmission off), none the provider settled', () => {
    expect(summary.review.settledAtProvider).toBe(0);
    expect(Object.keys(summary.review.providerStatus).filter((status) => status !== 'NOT_CREATED')).toEqual([]);
  });

  it('holds every money-safety invariant', () => {
    expect(summary.violations).toEqual([]);
  });

  it('executed each withdrawal_reference at most once, and every payout ended final or in NEEDS_REVIEW', () => {
    expect(summary.ledger.maxPerReference).toBeLessThanOrEqual(1);
    const open = Object.entries(summary.finalStates).filter(([state]) => !['SUCCEEDED', 'FAILED', 'REJECTED', 'NEEDS_REVIEW'].includes(state));
    expect(open).toEqual([]);
  });

  it('accounts for every accepted message: final + review + dead-lettered with a reason', () => {
    expect(summary.accountedFor).toBe(summary.accepted);
    expect(summary.deadLetters.only).toBeGreaterThan(0);
  });
});
