import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KycCallbackEvent } from '@shared/domain/callbacks';
import {
  applyKycEvent,
  isAfter,
  isApprovalConfirmed,
  KycSubjectMismatchError,
  needsConfirmation,
  recordPull,
  type KycSubject,
} from '@shared/domain/kyc-subject';

const APP = 'app-1';
const NOW = new Date('2026-11-22T10:00:00.000Z');

function event(overrides: Partial<KycCallbackEvent> = {}): KycCallbackEvent {
  return {
    userReference: 'user-1',
    phase: 'initiated',
    decision: 'awaiting_approval',
    event: 'applicantCreated',
    occurredAt: '2026-11-22T09:00:00.000Z',
    ...overrides,
  };
}

const created = event();
const pending = event({ phase: 'pending', event: 'applicantPending', occurredAt: '2026-11-22T09:01:00.000Z' });
const approved = event({
  phase: 'completed',
  decision: 'approved',
  note: 'Verification complete',
  event: 'applicantReviewed',
  occurredAt: '2026-11-22T09:02:00.000Z',
});
const rejectedLater = event({
  phase: 'completed',
  decision: 'rejected',
  note: 'Fraud',
  event: 'applicantReviewed',
  occurredAt: '2026-11-22T09:30:00.000Z',
});

/** Applies events in order, saving like the repository does (version + 1 on each change). */
function applyAll(events: Array<[KycCallbackEvent, string]>, start?: KycSubject): KycSubject | undefined {
  let subject = start;
  for (const [e, id] of events) {
    const result = applyKycEvent(subject, APP, e, id, NOW);
    if (result.changed) subject = { ...result.subject, version: result.subject.version + 1 };
  }
  return subject;
}

/** The projection without its bookkeeping (version, updatedAt), for convergence comparisons. */
function projection(subject: KycSubject | undefined): Omit<KycSubject, 'version' | 'updatedAt'> | undefined {
  if (subject === undefined) return undefined;
  const { version: _v, updatedAt: _u, ...rest } = subject;
  return JSON.parse(JSON.stringify(rest)) as Omit<KycSubject, 'version' | 'updatedAt'>;
}

describe('KYC subject projection', () => {
  it('follows the documented sequence to completed and approved, waiting for confirmation', () => {
    const subject = applyAll([
      [created, 'e1'],
      [pending, 'e2'],
      [approved, 'e3'],
    ]);
    expect(subject).toMatchObject({ phase: 'completed', decision: 'approved', note: 'Verification complete', decisionChanged: false });
    expect(needsConfirmation(subject as KycSubject)).toBe(true);
    expect(isApprovalConfirmed(subject as KycSubject)).toBe(false);
  });

  it('ignores a pending callback that arrives after completed (rank guard)', () => {
    const done = applyAll([
      [created, 'e1'],
      [approved, 'e3'],
    ]) as KycSubject;
    const late = applyKycEvent(done, APP, pending, 'e2', NOW);
    expect(late.changed).toBe(false);
    expect(late.subject.phase).toBe('completed');
  });

  it('writes nothing for a duplicate', () => {
    const once = applyAll([[approved, 'e3']]) as KycSubject;
    expect(applyKycEvent(once, APP, approved, 'e3', NOW).changed).toBe(false);
  });

  it('applies a later change of final answer and flags it once', () => {
    const first = applyAll([[approved, 'e3']]) as KycSubject;
    const change = applyKycEvent(first, APP, rejectedLater, 'e9', NOW);
    expect(change.newlyFlagged).toBe(true);
    expect(change.subject).toMatchObject({ decision: 'rejected', note: 'Fraud', decisionChanged: true, finalDecisionsSeen: ['approved', 'rejected'] });
    const again = applyKycEvent(change.subject, APP, { ...approved, occurredAt: '2026-11-22T09:40:00.000Z' }, 'e10', NOW);
    expect(again.subject.decision).toBe('approved');
    expect(again.newlyFlagged).toBe(false);
  });

  it('flags a changed answer even when the older one arrives last', () => {
    const subject = applyAll([
      [rejectedLater, 'e9'],
      [approved, 'e3'],
    ]) as KycSubject;
    expect(subject).toMatchObject({ decision: 'rejected', decisionChanged: true });
  });

  it('keeps user data from the review that carried it, whatever arrives after', () => {
    const withData = { ...approved, occurredAt: '2026-11-22T09:03:00.000Z', profile: { first_name: 'Ama', last_name: 'Mensah' } };
    const subject = applyAll([
      [withData, 'e4'],
      [approved, 'e3'],
    ]) as KycSubject;
    expect(subject.profile).toEqual({ first_name: 'Ama', last_name: 'Mensah' });
  });

  it('counts an approval only once the verification-status endpoint confirms it', () => {
    const subject = applyAll([[approved, 'e3']]) as KycSubject;
    const notYet = recordPull(subject, 'awaiting_approval', 'pending', NOW);
    expect(isApprovalConfirmed(notYet)).toBe(false);
    expect(notYet.lastPull?.outcome).toBe('not_yet');
    const contradicted = recordPull(subject, 'rejected', 'rejected', NOW);
    expect(isApprovalConfirmed(contradicted)).toBe(false);
    expect(contradicted.lastPull?.outcome).toBe('contradicted');
    const confirmed = recordPull(subject, 'approved', 'approved', NOW);
    expect(isApprovalConfirmed(confirmed)).toBe(true);
    expect(needsConfirmation(confirmed)).toBe(false);
  });

  it('drops a confirmation when the decision changes, so a new approval is confirmed again', () => {
    const confirmed = recordPull(applyAll([[approved, 'e3']]) as KycSubject, 'approved', 'approved', NOW);
    const rejected = applyKycEvent(confirmed, APP, rejectedLater, 'e9', NOW).subject;
    expect(rejected.confirmedAt).toBeUndefined();
    const reapproved = applyKycEvent(rejected, APP, { ...approved, occurredAt: '2026-11-22T10:00:00.000Z' }, 'e11', NOW).subject;
    expect(needsConfirmation(reapproved)).toBe(true);
  });

  it('orders an approval without a readable time before a dated rejection, whichever arrives first', () => {
    const undatedApproval = { ...approved, occurredAt: '' };
    for (const order of [
      [[undatedApproval, 'kyc#fff'], [rejectedLater, 'kyc#000']],
      [[rejectedLater, 'kyc#000'], [undatedApproval, 'kyc#fff']],
    ] as Array<Array<[KycCallbackEvent, string]>>) {
      const confirmedFirst = applyAll([order[0] as [KycCallbackEvent, string]]) as KycSubject;
      const start = confirmedFirst.decision === 'approved' ? recordPull(confirmedFirst, 'approved', 'approved', NOW) : confirmedFirst;
      const subject = applyAll([order[1] as [KycCallbackEvent, string]], start);
      expect(subject?.decision).toBe('rejected');
      expect(isApprovalConfirmed(subject as KycSubject)).toBe(false);
      expect(subject?.decisionChanged).toBe(true);
    }
  });

  it('orders an undated rejection after a dated approval, whichever arrives first: the safe direction', () => {
    const undatedRejection = { ...rejectedLater, occurredAt: '' };
    for (const order of [
      [[approved, 'kyc#000'], [undatedRejection, 'kyc#fff']],
      [[undatedRejection, 'kyc#fff'], [approved, 'kyc#000']],
    ] as Array<Array<[KycCallbackEvent, string]>>) {
      const first = applyAll([order[0] as [KycCallbackEvent, string]]) as KycSubject;
      const start = first.decision === 'approved' ? recordPull(first, 'approved', 'approved', NOW) : first;
      const subject = applyAll([order[1] as [KycCallbackEvent, string]], start);
      expect(subject?.decision).toBe('rejected');
      expect(isApprovalConfirmed(subject as KycSubject)).toBe(false);
    }
  });

  it('keeps a rejection stored undated by an older version ahead of a dated approval', () => {
    const stored = applyAll([[{ ...rejectedLater, occurredAt: '' }, 'kyc#fff']]) as KycSubject;
    // As the version before stored it: the time field empty.
    const older = { ...stored, position: '2||kyc#fff' };
    expect(applyAll([[approved, 'kyc#000']], older)?.decision).toBe('rejected');
  });

  it('orders positions by rank, then time (none before any), then event id', () => {
    expect(isAfter('2|2026-11-22T09:30:00.000Z|kyc#a', '2||kyc#z')).toBe(true);
    expect(isAfter('2||kyc#z', '2|2026-11-22T09:30:00.000Z|kyc#a')).toBe(false);
    expect(isAfter('2||kyc#b', '2||kyc#a')).toBe(true);
    expect(isAfter('1|2026-11-22T09:30:00.000Z|kyc#a', '2|2026-11-22T09:00:00.000Z|kyc#a')).toBe(false);
    expect(isAfter('2|2026-11-22T09:31:00.000Z|kyc#a', '2|2026-11-22T09:30:00.000Z|kyc#b')).toBe(true);
    expect(isAfter('2|2026-11-22T09:30:00.000Z|kyc#a', '2|2026-11-22T09:30:00.000Z|kyc#a')).toBe(false);
  });

  it('never applies an event to another user', () => {
    const subject = applyAll([[approved, 'e3']]) as KycSubject;
    expect(() => applyKycEvent(subject, APP, { ...pending, userReference: 'user-2' }, 'x', NOW)).toThrow(KycSubjectMismatchError);
  });

  it('converges to the same projection under any permutation and duplication of the same events', () => {
    const phaseDecision = fc.constantFrom(
      { phase: 'initiated', decision: 'awaiting_approval' } as const,
      { phase: 'pending', decision: 'awaiting_approval' } as const,
      { phase: 'completed', decision: 'approved' } as const,
      { phase: 'completed', decision: 'rejected' } as const,
    );
    const anEvent = fc.record({
      pd: phaseDecision,
      minute: fc.integer({ min: 0, max: 5 }),
      withProfile: fc.boolean(),
      note: fc.constantFrom('a', 'b', undefined),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(anEvent, { minLength: 1, maxLength: 8, selector: (e) => JSON.stringify(e) }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 20 }),
        (specs, shuffle) => {
          const events: Array<[KycCallbackEvent, string]> = specs.map((s, i) => [
            event({
              ...s.pd,
              note: s.note,
              occurredAt: `2026-11-22T09:0${s.minute}:00.000Z`,
              profile: s.withProfile ? { first_name: `n${i}` } : undefined,
            }),
            `id-${i}`,
          ]);
          // A permutation with duplicates: every event at least once, some again, in a scrambled order.
          const scrambled = [...events, ...shuffle.map((n) => events[n % events.length] as [KycCallbackEvent, string])];
          for (let i = scrambled.length - 1; i > 0; i -= 1) {
            const j = (shuffle[i % shuffle.length] as number) % (i + 1);
            [scrambled[i], scrambled[j]] = [scrambled[j] as [KycCallbackEvent, string], scrambled[i] as [KycCallbackEvent, string]];
          }
          expect(projection(applyAll(scrambled))).toEqual(projection(applyAll(events)));
          expect(projection(applyAll([...events].reverse()))).toEqual(projection(applyAll(events)));
        },
      ),
      { numRuns: 300 },
    );
  });
});
