import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '@shared/domain/errors';
import { FINAL_STATES, WATCHED_STATES, canTransition, type Payout } from '@shared/domain/payout';
import { fuzzSeed, runs, scaledTimeout } from './runs';
import { payoutInState } from '@test/factories/ports';
import { PAYOUT_STATE_RANK } from '@test/support/payout-rank';

/*
 * Money-safety rules 1 and 4 on the entity itself: whatever events and outcomes arrive, in whatever
 * order, the payout never moves backwards, leaves a final state only along a watched edge, keeps every move in its
 * history, and never allows a second Payout call unless something proved the first never counted.
 */


const KINDS = [
  'reversed',
  'unwatch',
  'startVerifying',
  'reject',
  'withdrawIntent',
  'startSubmitting',
  'submitNotSent',
  'submitted',
  'unknown',
  'refused',
  'refusedDuplicate',
  'failed',
  'succeeded',
  'needsReview',
  'authorizeResubmit',
  'checked',
  'notFound',
  'held',
] as const;
type Op = { kind: (typeof KINDS)[number] };

const opArb: fc.Arbitrary<Op> = fc.constantFrom(...KINDS).map((kind) => ({ kind }));

/** Operations after which the provider has shown it holds the reference. */
const ACKNOWLEDGING: ReadonlySet<Op['kind']> = new Set(['submitted', 'refusedDuplicate', 'held']);

/** One step: an operation and how many minutes passed before it. */
const stepArb = fc.record({ op: opArb, minutes: fc.integer({ min: 0, max: 30 }) });

const GRACE_MS = 15 * 60_000;

function apply(p: Payout, op: Op, now: Date): Payout {
  switch (op.kind) {
    case 'startVerifying':
      return p.startVerifying(now);
    case 'reject':
      return p.reject('property: rejected', now);
    case 'withdrawIntent':
      return p.withdrawIntent('property: name mismatch', now);
    case 'startSubmitting':
      return p.startSubmitting(now, 'Kwame Mensah');
    case 'submitNotSent':
      return p.submitNotSent(now, 'property: not sent');
    case 'submitted':
      return p.submitted('PENDING', now);
    case 'unknown':
      return p.unknown('property: ambiguous', now);
    case 'failed':
      return p.failed('property: refused', now, 'FAILED');
    case 'succeeded':
      return p.succeeded('COMPLETED', now);
    case 'needsReview':
      return p.needsReview('property: review', now);
    case 'authorizeResubmit':
      return p.authorizeResubmit(now, GRACE_MS);
    case 'refused':
      return p.refused('property: refused', now, { acknowledged: false });
    case 'refusedDuplicate':
      return p.refused('property: duplicate', now, { acknowledged: true });
    case 'reversed':
      return p.reversed('property: money came back', now, 'REVERSED');
    case 'unwatch':
      return p.unwatch(now);
    case 'checked':
      return p.checked(now);
    case 'notFound':
      return p.notFound(now);
    case 'held':
      return p.heldByProvider('GATEWAY_ERROR', now);
  }
}

const t0 = new Date('2026-03-01T00:00:00.000Z');

const fresh = (): Payout => payoutInState('ACCEPTED', { platform_merchant_id: 'm-prop', currency: 'GHS', withdrawal_reference: 'wr-prop' }, t0);

describe('payout state machine (property)', () => {
  it('random event and outcome sequences never regress, never leave a final state and never submit twice', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), (steps) => {
        let payout = fresh();
        let clock = t0.getTime();
        // Payout calls the entity may still allow: one at first; a new one only after proof that
        // the previous call never reached the provider (not sent) or is unknown to it (not found).
        let allowance = 1;
        let payoutCalls = 0;
        // Whether the provider ever showed it holds the reference, and where the current not-found run began.
        let acknowledged = false;
        let runStart: number | undefined;
        for (const { op, minutes } of steps) {
          clock += minutes * 60_000;
          const now = new Date(clock);
          const before = payout;
          let after: Payout;
          try {
            after = apply(before, op, now);
          } catch (error) {
            // A refused operation is a named domain error and changes nothing.
            expect(error).toBeInstanceOf(DomainError);
            continue;
          }
          expect(after.version).toBe(before.version + 1);
          // History is append-only and every appended move is legal and strictly forward.
          expect(after.record.history.slice(0, before.record.history.length)).toEqual(before.record.history);
          const added = after.record.history.slice(before.record.history.length);
          expect(added.length).toBeLessThanOrEqual(1);
          if (added.length === 1) {
            const move = added[0]!;
            expect(move.from).toBe(before.state);
            expect(move.to).toBe(after.state);
            expect(canTransition(before.state, after.state)).toBe(true);
            expect(PAYOUT_STATE_RANK[after.state]).toBeGreaterThan(PAYOUT_STATE_RANK[before.state]);
            // The stored reason describes the state just entered: the move's own reason, or none; the
            // reason of the state left (an ambiguous outcome, a retry token) is kept only in history.
            if (after.record.reason !== undefined) expect(after.record.reason).toBe(move.reason);
          } else {
            expect(after.state).toBe(before.state);
          }
          // A final state moves only along a watched state's edges (NEEDS_REVIEW -> SUCCEEDED | FAILED, SUCCEEDED -> REVERSED).
          if (FINAL_STATES.has(before.state) && after.state !== before.state) expect(WATCHED_STATES.has(before.state)).toBe(true);
          if (after.isFinal) {
            if (!WATCHED_STATES.has(after.state)) expect(after.record.nextCheckAt).toBeUndefined();
            expect(after.maySubmit).toBe(false);
          }

          if (op.kind === 'startSubmitting') {
            payoutCalls += 1;
            expect(allowance, 'a second Payout call was allowed without proof the first did not count').toBeGreaterThanOrEqual(1);
            allowance -= 1;
            expect(after.record.submitAttempts).toBe(before.record.submitAttempts + 1);
          } else {
            expect(after.record.submitAttempts).toBe(before.record.submitAttempts);
          }
          if (op.kind === 'submitNotSent' || op.kind === 'authorizeResubmit') allowance = 1;
          // REJECTED before any intent (reject), or as the one intent withdrawn by its writer: from
          // SUBMITTING with that single intent and nothing that shows a call (no acknowledgement, no
          // provider status, no refusal).
          if (op.kind === 'reject') expect(['ACCEPTED', 'VERIFYING']).toContain(before.state);
          if (op.kind === 'withdrawIntent') {
            expect(before.state).toBe('SUBMITTING');
            expect(after.state).toBe('REJECTED');
            expect(before.record.submitAttempts).toBe(1);
            expect(acknowledged, 'an intent withdrawn after the provider acknowledged the reference').toBe(false);
            expect(before.record.providerStatus).toBeUndefined();
            expect(before.record.refusedAt).toBeUndefined();
          }
          if (op.kind === 'authorizeResubmit') {
            expect(before.state).toBe('UNKNOWN');
            expect(acknowledged, 'resubmission authorized after the provider acknowledged the reference').toBe(false);
            expect(runStart, 'resubmission authorized without a not-found run').toBeDefined();
            expect(clock - (runStart ?? clock)).toBeGreaterThanOrEqual(GRACE_MS);
          }
          if (ACKNOWLEDGING.has(op.kind)) {
            acknowledged = true;
            runStart = undefined;
            expect(after.record.acknowledgedAt).toBeDefined();
            expect(after.record.notFoundSince).toBeUndefined();
          }
          if (op.kind === 'notFound') runStart ??= clock;
          if (op.kind === 'startSubmitting') runStart = undefined;
          if (acknowledged) expect(after.acknowledged).toBe(true);
          payout = after;
        }
        expect(payout.record.submitAttempts).toBe(payoutCalls);
        // The whole history is one chain from ACCEPTED.
        const history = payout.record.history;
        expect(history[0]).toMatchObject({ from: null, to: 'ACCEPTED' });
        for (let i = 1; i < history.length; i++) expect(history[i]!.from).toBe(history[i - 1]!.to);
        expect(history[history.length - 1]!.to).toBe(payout.state);
      }),
      { numRuns: runs(1500), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('a payout that may have reached the provider (SUBMITTING, SUBMITTED, UNKNOWN) refuses a new intent without a token', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 30 }), (steps) => {
        let payout = fresh();
        let clock = t0.getTime();
        for (const { op, minutes } of steps) {
          clock += minutes * 60_000;
          try {
            payout = apply(payout, op, new Date(clock));
          } catch {
            // refused: unchanged
          }
          const r = payout.record;
          const reachable = r.state === 'SUBMITTING' || r.state === 'SUBMITTED' || r.state === 'UNKNOWN';
          if (reachable && !r.submitRetryAllowed && !r.resubmitAuthorized) {
            expect(payout.maySubmit).toBe(false);
            expect(() => payout.startSubmitting(new Date(clock))).toThrow(DomainError);
          }
        }
      }),
      { numRuns: runs(800), seed: fuzzSeed() },
    );
  }, scaledTimeout());
});
