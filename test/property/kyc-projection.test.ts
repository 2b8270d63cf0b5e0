import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KycCallbackEvent } from '@shared/domain/callbacks';
import { applyKycEvent, type KycSubject } from '@shared/domain/kyc-subject';
import type { KycPhase } from '@shared/domain/kyc-status';
import { fuzzSeed, runs, scaledTimeout } from './runs';

/*
 * Money-safety rule 4 for KYC subjects: callbacks repeat and arrive out of order, and any
 * permutation with any duplications of a sequence must converge to the subject that in-order
 * delivery gives (so a late `pending` or a redelivered approval can never undo a later answer).
 */

const APP = 'app-prop';
const USER = 'user-prop-1';
const now = new Date('2026-03-01T12:00:00.000Z');
const base = Date.parse('2026-03-01T10:00:00.000Z');

const EVENT_NAMES: Record<KycPhase, string> = { initiated: 'applicantCreated', pending: 'applicantPending', completed: 'applicantReviewed' };

const eventArb: fc.Arbitrary<KycCallbackEvent> = fc
  .record({
    phase: fc.constantFrom<KycPhase>('initiated', 'pending', 'completed'),
    final: fc.constantFrom('approved' as const, 'rejected' as const),
    note: fc.option(fc.constantFrom('documents ok', 'blurry selfie', 'fraud suspected'), { nil: undefined }),
    orderId: fc.option(fc.constantFrom('order-1', 'order-2'), { nil: undefined }),
    // Seconds after the journey started; equal times happen (two posts in one second).
    offset: fc.integer({ min: 0, max: 600 }),
    timestamped: fc.boolean(),
    profile: fc.option(fc.record({ first_name: fc.constantFrom('Ama', 'Kofi'), last_name: fc.constantFrom('Mensah', 'Owusu') }), {
      nil: undefined,
    }),
  })
  .map(({ phase, final, note, orderId, offset, timestamped, profile }) => ({
    userReference: USER,
    phase,
    decision: phase === 'completed' ? final : 'awaiting_approval',
    note,
    event: EVENT_NAMES[phase],
    orderId,
    occurredAt: timestamped ? new Date(base + offset * 1000).toISOString() : '',
    profile,
  }));

/** A journey: distinct events (each has its own id, as a distinct body has its own dedupe key). */
const journeyArb = fc.array(eventArb, { minLength: 1, maxLength: 8 }).map((events) => events.map((event, i) => ({ event, id: `kyc#${i.toString().padStart(4, '0')}` })));

type Delivery = { event: KycCallbackEvent; id: string };

function project(deliveries: readonly Delivery[]): KycSubject | undefined {
  let subject: KycSubject | undefined;
  for (const { event, id } of deliveries) {
    const result = applyKycEvent(subject, APP, event, id, now);
    if (result.changed) subject = { ...result.subject, version: (subject?.version ?? 0) + 1 };
  }
  return subject;
}

/** What a subject says, leaving out the bookkeeping that counts writes (version) or stamps them. */
function meaning(subject: KycSubject | undefined): Omit<KycSubject, 'version' | 'updatedAt'> | undefined {
  if (!subject) return undefined;
  const { version: _v, updatedAt: _u, ...rest } = subject;
  return JSON.parse(JSON.stringify(rest)) as Omit<KycSubject, 'version' | 'updatedAt'>;
}

/** The provider's own order: by event time (untimed events first, as they cannot be placed), then as sent. */
const inOrder = (journey: readonly Delivery[]): Delivery[] =>
  [...journey].sort((a, b) => (a.event.occurredAt < b.event.occurredAt ? -1 : a.event.occurredAt > b.event.occurredAt ? 1 : a.id < b.id ? -1 : 1));

describe('KYC projection (property)', () => {
  it('any permutation with duplications of a callback sequence converges to the in-order result', () => {
    fc.assert(
      fc.property(
        journeyArb.chain((journey) =>
          fc.tuple(
            fc.constant(journey),
            // Each event delivered 1 to 3 times, then all deliveries shuffled.
            fc.array(fc.integer({ min: 1, max: 3 }), { minLength: journey.length, maxLength: journey.length }),
            fc.infiniteStream(fc.nat()),
          ),
        ),
        ([journey, copies, randomness]) => {
          const expected = meaning(project(inOrder(journey)));
          const deliveries = journey.flatMap((d, i) => Array.from({ length: copies[i]! }, () => d));
          const draws = randomness[Symbol.iterator]();
          for (let i = deliveries.length - 1; i > 0; i--) {
            const j = (draws.next().value as number) % (i + 1);
            [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
          }
          expect(meaning(project(deliveries))).toEqual(expected);
        },
      ),
      { numRuns: runs(1500), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('a redelivery of an event already reflected changes nothing', () => {
    fc.assert(
      fc.property(journeyArb, fc.nat(), (journey, pick) => {
        const ordered = inOrder(journey);
        const subject = project(ordered);
        const again = ordered[pick % ordered.length]!;
        const result = applyKycEvent(subject, APP, again.event, again.id, now);
        expect(result.changed).toBe(false);
        expect(result.subject).toBe(subject);
      }),
      { numRuns: runs(800), seed: fuzzSeed() },
    );
  }, scaledTimeout());

  it('the phase never moves backwards, whatever the arrival order', () => {
    const rank: Record<KycPhase, number> = { initiated: 0, pending: 1, completed: 2 };
    fc.assert(
      fc.property(journeyArb, fc.infiniteStream(fc.nat()), (journey, randomness) => {
        const deliveries = [...journey];
        const draws = randomness[Symbol.iterator]();
        for (let i = deliveries.length - 1; i > 0; i--) {
          const j = (draws.next().value as number) % (i + 1);
          [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
        }
        let subject: KycSubject | undefined;
        for (const { event, id } of deliveries) {
          const next = applyKycEvent(subject, APP, event, id, now).subject;
          if (subject) expect(rank[next.phase]).toBeGreaterThanOrEqual(rank[subject.phase]);
          subject = next;
        }
      }),
      { numRuns: runs(800), seed: fuzzSeed() },
    );
  }, scaledTimeout());
});
