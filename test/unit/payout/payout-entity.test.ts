import { describe, expect, it } from 'vitest';
import {
  IllegalTransitionError,
  PAYOUT_STATES,
  PayoutAlreadySubmittedError,
  backoffMs,
  canTransition,
  isFinal,
  NOTHING_PAID,
  Payout,
  operatorWho,
  type PayoutState,
} from '@shared/domain/payout';
import { payoutInState } from '@test/factories/ports';
import { PAYOUT_STATE_RANK } from '@test/support/payout-rank';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (minutes: number): Date => new Date(t0.getTime() + minutes * 60_000);

const accepted = (): Payout => payoutInState('ACCEPTED', { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'w-1' }, t0);

const submitting = (): Payout => accepted().startVerifying(at(0)).startSubmitting(at(0), 'Ama Owusu');

describe('Payout state machine', () => {
  it('starts in ACCEPTED, version 1, with one history entry and a first check scheduled', () => {
    const p = accepted();
    expect(p.state).toBe('ACCEPTED');
    expect(p.version).toBe(1);
    expect(p.record.history).toEqual([{ from: null, to: 'ACCEPTED', at: t0.toISOString(), reason: 'payout request accepted' }]);
    expect(p.record.nextCheckAt).toBe(at(1).toISOString());
  });

  it('walks the happy path forward, bumping the version and keeping every move in history', () => {
    const p = submitting().submitted('PENDING', at(1)).succeeded('COMPLETED', at(2));
    expect(p.state).toBe('SUCCEEDED');
    expect(p.version).toBe(5);
    expect(p.record.history.map((h) => h.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED', 'SUCCEEDED']);
    expect(p.record.history.map((h) => h.from)).toEqual([null, 'ACCEPTED', 'VERIFYING', 'SUBMITTING', 'SUBMITTED']);
    // Out of the reconciler's index: the reversal watch finds it by the age of its last change.
    expect(p.record.nextCheckAt).toBeUndefined();
    expect(p.isWatched).toBe(false);
    expect(p.record.verifiedName).toBe('Ama Owusu');
  });

  it('leaves a final state only along the watched edges: NEEDS_REVIEW -> SUCCEEDED | FAILED, SUCCEEDED -> REVERSED', () => {
    const finals = PAYOUT_STATES.filter(isFinal);
    expect(finals.sort()).toEqual(['FAILED', 'NEEDS_REVIEW', 'REJECTED', 'REVERSED', 'SUCCEEDED']);
    const edges = finals.flatMap((from) => PAYOUT_STATES.filter((to) => canTransition(from, to)).map((to) => `${from}->${to}`));
    expect(edges.sort()).toEqual(['NEEDS_REVIEW->FAILED', 'NEEDS_REVIEW->SUCCEEDED', 'SUCCEEDED->REVERSED']);
    const done = submitting().submitted('PENDING', at(1)).succeeded('COMPLETED', at(2));
    expect(() => done.failed('late FAILED', at(3))).toThrow(IllegalTransitionError);
    expect(() => done.needsReview('x', at(3))).toThrow(IllegalTransitionError);
  });

  it('never moves backwards (rule 4): no edge returns to an earlier state of the happy path', () => {
    const order: PayoutState[] = ['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'UNKNOWN', 'SUBMITTED', 'SUCCEEDED'];
    for (let i = 0; i < order.length; i++) {
      for (let j = 0; j <= i; j++) expect(canTransition(order[i] as PayoutState, order[j] as PayoutState)).toBe(false);
    }
    expect(() => submitting().submitted('PENDING', at(1)).unknown('late time-out', at(2))).toThrow(IllegalTransitionError);
  });

  it('every legal move goes strictly up the rank the history proofs use', () => {
    for (const from of PAYOUT_STATES) {
      for (const to of PAYOUT_STATES) {
        if (canTransition(from, to)) expect(PAYOUT_STATE_RANK[to], `${from} -> ${to}`).toBeGreaterThan(PAYOUT_STATE_RANK[from]);
      }
    }
  });

  it('refuses to write a second payout intent (rule 1)', () => {
    const p = submitting();
    expect(p.maySubmit).toBe(false);
    expect(() => p.startSubmitting(at(1))).toThrow(PayoutAlreadySubmittedError);
    for (const later of [p.submitted('PENDING', at(1)), p.unknown('time-out', at(1)), p.failed('refused', at(1))]) {
      expect(later.maySubmit).toBe(false);
      expect(() => later.startSubmitting(at(2))).toThrow(PayoutAlreadySubmittedError);
    }
  });

  it('a not-sent call leaves exactly one retry token, spent by the next intent write', () => {
    const notSent = submitting().submitNotSent(at(1), 'payout call not sent: ProviderUnavailableError');
    expect(notSent.state).toBe('SUBMITTING');
    expect(notSent.maySubmit).toBe(true);
    const retry = notSent.startSubmitting(at(2));
    expect(retry.state).toBe('SUBMITTING');
    expect(retry.record.submitAttempts).toBe(2);
    expect(retry.maySubmit).toBe(false);
    expect(() => retry.startSubmitting(at(3))).toThrow(PayoutAlreadySubmittedError);
  });

  it('a move replaces the reason of the state it leaves; history keeps the old one', () => {
    const ambiguous = 'ambiguous payout outcome: time-out after the request was sent; the provider may have acted on it';
    const held = submitting().unknown(ambiguous, at(1)).heldByProvider('PENDING', at(2));
    expect(held.state).toBe('SUBMITTED');
    expect(held.record.reason).toBe('provider holds the payout (PENDING)');
    expect(held.record.history.map((h) => h.reason)).toContain(ambiguous);
    // A plain acceptance after a released intent: the "not sent" reason is over, and nothing replaces it.
    const accepted = submitting().submitNotSent(at(1), 'payout call not sent: ProviderUnavailableError').startSubmitting(at(2)).submitted('PENDING', at(3));
    expect(accepted.record.reason).toBeUndefined();
    expect(accepted.record.history.at(-1)?.reason).toBe('provider accepted the payout');
  });

  it('a state move spends any unspent token', () => {
    const moved = submitting().submitNotSent(at(1), 'not sent').submitted('PENDING', at(2));
    expect(moved.record.submitRetryAllowed).toBeUndefined();
    expect(moved.maySubmit).toBe(false);
  });

  it('authorizes one resubmission only after the provider has not known the reference for the grace period', () => {
    const unknown = submitting().unknown('time-out', at(1));
    expect(() => unknown.authorizeResubmit(at(2), 15 * 60_000)).toThrow(PayoutAlreadySubmittedError);
    const seen = unknown.notFound(at(2));
    expect(() => seen.authorizeResubmit(at(10), 15 * 60_000)).toThrow(PayoutAlreadySubmittedError);
    const allowed = seen.authorizeResubmit(at(17), 15 * 60_000);
    expect(allowed.maySubmit).toBe(true);
    const again = allowed.startSubmitting(at(18));
    expect(again.state).toBe('UNKNOWN');
    expect(again.record.submitAttempts).toBe(2);
    expect(again.maySubmit).toBe(false);
    expect(again.unknown('time-out again', at(19)).state).toBe('UNKNOWN');
    expect(() => submitting().submitted('PENDING', at(1)).authorizeResubmit(at(100), 0)).toThrow(IllegalTransitionError);
  });

  it('backs off checks 1, 2, 5, 15 minutes then hourly', () => {
    expect([0, 1, 2, 3, 4, 9].map((n) => backoffMs(n) / 60_000)).toEqual([1, 2, 5, 15, 60, 60]);
    const p = submitting().submitted('PENDING', at(0));
    const c1 = p.checked(at(1));
    expect(c1.record.checks).toBe(1);
    expect(c1.record.nextCheckAt).toBe(at(3).toISOString());
    expect(c1.state).toBe('SUBMITTED');
    expect(c1.record.history).toHaveLength(p.record.history.length);
  });

  it('records the reason and verified name of a rejection', () => {
    const p = accepted().startVerifying(at(0)).reject('name mismatch', at(1), { verifiedName: 'Kofi Boateng' });
    expect(p.state).toBe('REJECTED');
    expect(p.record.reason).toBe('name mismatch');
    expect(p.record.verifiedName).toBe('Kofi Boateng');
    expect(p.record.history.at(-1)).toMatchObject({ from: 'VERIFYING', to: 'REJECTED', reason: 'name mismatch' });
  });
});

describe('an intent written beside the verification (withdrawIntent, withVerifiedName)', () => {
  /** The worker's create: ACCEPTED, VERIFYING and the intent in one version, before any verified name. */
  const intent = (): Payout => accepted().startVerifying(at(0)).startSubmitting(at(0));

  it('its writer withdraws it after a refusal: SUBMITTING -> REJECTED in one version, saying no Payout call was made', () => {
    const before = intent();
    const p = before.withdrawIntent('name mismatch: expected "A", account holder "B"', at(1), { verifiedName: 'Kofi Boateng' });
    expect(p.state).toBe('REJECTED');
    expect(p.version).toBe(before.version + 1);
    expect(p.record.reason).toBe('intent withdrawn before any Payout call: name mismatch: expected "A", account holder "B"');
    expect(p.record.history.map((h) => h.to)).toEqual(['ACCEPTED', 'VERIFYING', 'SUBMITTING', 'REJECTED']);
    expect(p.record.history.at(-1)).toMatchObject({ from: 'SUBMITTING', to: 'REJECTED', reason: p.record.reason });
    expect(p.record.verifiedName).toBe('Kofi Boateng');
    // The withdrawn intent still counts as written; the payout is final and out of the open index.
    expect(p.record.submitAttempts).toBe(1);
    expect(p.record.nextCheckAt).toBeUndefined();
    expect(p.maySubmit).toBe(false);
  });

  it('is withdrawn after a reconciler look (a check) or a not-sent release, which show no call', () => {
    expect(intent().checked(at(1)).withdrawIntent('account not found', at(2)).state).toBe('REJECTED');
    expect(intent().submitNotSent(at(1), 'verification did not complete').withdrawIntent('KYC not approved', at(2)).state).toBe('REJECTED');
  });

  it('refuses once anything shows a Payout call could have been made, and outside SUBMITTING', () => {
    const refusals: Array<[string, Payout]> = [
      ['SUBMITTED', intent().submitted('PENDING', at(1))],
      ['UNKNOWN', intent().unknown('time-out', at(1))],
      ['a second intent (token spent)', intent().submitNotSent(at(1), 'not sent').startSubmitting(at(2))],
      ['ACCEPTED', accepted()],
      ['VERIFYING', accepted().startVerifying(at(0))],
      ['REJECTED', accepted().startVerifying(at(0)).reject('misrouted', at(1))],
    ];
    for (const [what, p] of refusals) expect(() => p.withdrawIntent('name mismatch', at(3)), what).toThrow(IllegalTransitionError);
    // A provider status word or an acknowledgement on a SUBMITTING (GetPayout found it, or a refusal
    // named the reference) moves it on in this code; a record carrying either is refused all the same.
    const held = intent().withVerifiedName('Ama Owusu');
    for (const record of [{ ...held.record, providerStatus: 'PENDING' }, { ...held.record, acknowledgedAt: at(1).toISOString() }, { ...held.record, refusedAt: at(1).toISOString() }]) {
      expect(() => Payout.fromRecord(record).withdrawIntent('name mismatch', at(3))).toThrow(IllegalTransitionError);
    }
  });

  it('reject() stays for payouts without an intent: a SUBMITTING is refused only through withdrawIntent', () => {
    expect(() => intent().reject('name mismatch', at(1))).toThrow(IllegalTransitionError);
  });

  it('withVerifiedName keeps the version (the next write carries the name) and exists only for SUBMITTING', () => {
    const p = intent();
    const named = p.withVerifiedName('Ama Owusu');
    expect(named.version).toBe(p.version);
    expect(named.record.verifiedName).toBe('Ama Owusu');
    expect(named.submitted('PENDING', at(1)).record.verifiedName).toBe('Ama Owusu');
    expect(() => accepted().withVerifiedName('Ama Owusu')).toThrow(IllegalTransitionError);
  });
});

describe('Retry-After (askNotBefore)', () => {
  it('an ambiguous Payout answer with a Retry-After is not checked before it, and remembers it', () => {
    const p = submitting().unknown('HTTP 503', at(0), at(10));
    expect(p.record.nextCheckAt).toBe(at(10).toISOString());
    expect(p.record.askNotBefore).toBe(at(10).toISOString());
    expect(p.mustWaitForProvider(at(9))).toBe(true);
    expect(p.mustWaitForProvider(at(10))).toBe(false);
  });

  it('a refusal with a Retry-After is checked at the Retry-After, not at once', () => {
    const p = submitting().refused('HTTP 429', at(0), { acknowledged: false, notBefore: at(3) });
    expect(p.state).toBe('UNKNOWN');
    expect(p.record.nextCheckAt).toBe(at(3).toISOString());
  });

  it('wins over every later rescheduling (a check, a move to SUBMITTED, a kept create-time check)', () => {
    const waiting = submitting().checked(at(0), { notBefore: at(12) });
    expect(waiting.record.nextCheckAt).toBe(at(12).toISOString());
    // heldByProvider -> submitted() keeps an earlier check time when it can; the Retry-After still wins.
    expect(waiting.heldByProvider('PENDING', at(1)).record.nextCheckAt).toBe(at(12).toISOString());
    expect(waiting.checked(at(1)).record.nextCheckAt).toBe(at(12).toISOString());
    // Past the Retry-After the usual back-off applies again.
    const later = waiting.checked(at(13));
    expect(Date.parse(later.record.nextCheckAt ?? '')).toBeGreaterThan(at(13).getTime());
  });

  it('waitForProvider puts the look off without counting a check, and never shortens a longer wait', () => {
    const p = submitting().submitted('PENDING', at(0));
    const waited = p.waitForProvider(at(7), at(1));
    expect(waited.record.checks).toBe(p.record.checks);
    expect(waited.record.nextCheckAt).toBe(at(7).toISOString());
    expect(waited.waitForProvider(at(5), at(2)).record.nextCheckAt).toBe(at(7).toISOString());
    expect(waited.state).toBe('SUBMITTED');
  });
});

describe('mayHaveReachedProvider: whether "not found" alone can show a payout failed', () => {
  it('is false while no intent was written, and for an intent released as unsent or withdrawn', () => {
    expect(accepted().mayHaveReachedProvider).toBe(false);
    expect(accepted().needsReview(`not processed within 24 hours; ${NOTHING_PAID}`, at(1)).mayHaveReachedProvider).toBe(false);
    const released = submitting().submitNotSent(at(1), 'payout call not sent: ProviderUnavailableError');
    expect(released.mayHaveReachedProvider).toBe(false);
    expect(released.needsReview(`not processed within 24 hours; ${NOTHING_PAID}`, at(2)).mayHaveReachedProvider).toBe(false);
    expect(submitting().withdrawIntent('name mismatch', at(1)).mayHaveReachedProvider).toBe(false);
  });

  it('is true once an intent is held, or an outcome was recorded, or the provider showed it', () => {
    expect(submitting().mayHaveReachedProvider).toBe(true);
    // Handed to review from a held intent (status unavailable): the call may have gone out.
    expect(submitting().needsReview('still open after 1 hour; status unavailable', at(61)).mayHaveReachedProvider).toBe(true);
    expect(submitting().unknown('time-out', at(1)).needsReview('still open after 1 hour; status unavailable', at(61)).mayHaveReachedProvider).toBe(true);
    expect(submitting().submitted('PENDING', at(1)).mayHaveReachedProvider).toBe(true);
    // A released intent paid again later: the new intent counts.
    expect(submitting().submitNotSent(at(1), 'not sent').startSubmitting(at(2)).mayHaveReachedProvider).toBe(true);
  });

  it('refuses to write "nothing was paid" where a call may have been made', () => {
    expect(() => submitting().needsReview(`not processed within 24 hours; ${NOTHING_PAID}`, at(61))).toThrow(IllegalTransitionError);
    expect(() => submitting().unknown('time-out', at(1)).needsReview(`x; ${NOTHING_PAID}`, at(61))).toThrow(IllegalTransitionError);
  });
});

describe('who took an operator action: the stated name and the identity that ran it (actor)', () => {
  const id = { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'w-9' };
  const ARN = 'arn:aws:sts::123456789012:assumed-role/ops/ama';
  const audit = { evidence: 'provider ticket 4711', providerAnswer: 'FAILED (failed)' };

  it('records the actor beside `by` on a resolve when it differs', () => {
    const p = payoutInState('NEEDS_REVIEW', id, t0).resolveByOperator('FAILED', { by: 'alice@finance (not me)', actor: ARN, ...audit }, at(5));
    expect(p.record.history.at(-1)).toEqual({
      from: 'NEEDS_REVIEW',
      to: 'FAILED',
      at: at(5).toISOString(),
      reason: 'resolved as FAILED by alice@finance (not me): provider ticket 4711',
      by: 'alice@finance (not me)',
      actor: ARN,
      ...audit,
    });
  });

  it('records no actor when it is the name (the operator typed none) or is not given', () => {
    const same = payoutInState('NEEDS_REVIEW', id, t0).resolveByOperator('FAILED', { by: ARN, actor: ARN, ...audit }, at(5));
    expect(same.record.history.at(-1)).not.toHaveProperty('actor');
    expect(same.record.history.at(-1)?.by).toBe(ARN);
    const none = payoutInState('NEEDS_REVIEW', id, t0).resolveByOperator('SUCCEEDED', { by: 'ama', ...audit }, at(5));
    expect(none.record.history.at(-1)).not.toHaveProperty('actor');
  });

  it('records the actor on the retry link of a FAILED payout when it differs, and not when equal', () => {
    const linked = payoutInState('FAILED', id, t0).retriedWith('w-9-R1', 'ama', at(5), 'ama@ops-laptop');
    expect(linked.record.history.at(-1)).toMatchObject({ reason: 'retried as w-9-R1 by ama', by: 'ama', actor: 'ama@ops-laptop' });
    const same = payoutInState('FAILED', id, t0).retriedWith('w-9-R1', 'ama@ops-laptop', at(5), 'ama@ops-laptop');
    expect(same.record.history.at(-1)).not.toHaveProperty('actor');
  });

  it('operatorWho: the actor only when given, not blank and not the name (compared trimmed)', () => {
    expect(operatorWho('alice', ARN)).toEqual({ by: 'alice', actor: ARN });
    expect(operatorWho('alice', ' alice ')).toEqual({ by: 'alice' });
    expect(operatorWho('alice', '  ')).toEqual({ by: 'alice' });
    expect(operatorWho('alice', undefined)).toEqual({ by: 'alice' });
  });
});
