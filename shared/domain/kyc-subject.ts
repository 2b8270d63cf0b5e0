import { MAX_CALLBACK_CLOCK_SKEW_MS, type KycCallbackEvent, type KycProfile } from './callbacks';
import type { KycDecision, KycPhase } from './kyc-status';

/**
 * The KYC projection: one subject per (app, user_reference), built from callbacks that may repeat
 * and arrive in any order. The result depends only on the set of events applied, never on their
 * arrival order (see `applyKycEvent`), so replay and redelivery cannot move a subject backwards.
 */

/** The rank guard: a subject never moves to a lower phase. */
export const KYC_PHASE_RANK: Readonly<Record<KycPhase, number>> = { initiated: 0, pending: 1, completed: 2 };

export type FinalKycDecision = Extract<KycDecision, 'approved' | 'rejected'>;

/** The last answer of the verification-status endpoint, the authority on approvals. */
export interface KycPull {
  at: string;
  /** The provider's status word, as returned. */
  providerStatus: string;
  /** confirmed: it says approved; contradicted: it says rejected; not_yet: anything else. */
  outcome: 'confirmed' | 'not_yet' | 'contradicted';
}

export interface KycSubject {
  appId: string;
  userReference: string;
  phase: KycPhase;
  decision: KycDecision;
  note?: string;
  /** Provider event name of the event the subject reflects. */
  event: string;
  /** The order of the highest-positioned event that named one (events may omit it). */
  orderId?: string;
  orderPosition?: string;
  occurredAt: string;
  /** Ordering key of the reflected event: rank, then event time, then event id. */
  position: string;
  lastEventId: string;
  /** Every final decision ever received, sorted; more than one means the answer changed. */
  finalDecisionsSeen: FinalKycDecision[];
  /** A final answer changed later (e.g. approved, then rejected): applied, and flagged for people. */
  decisionChanged: boolean;
  profile?: KycProfile;
  profilePosition?: string;
  /** Set when the verification-status endpoint confirmed the current approval. */
  confirmedAt?: string;
  lastPull?: KycPull;
  /** Optimistic-concurrency counter; 0 before the first save. */
  version: number;
  updatedAt: string;
}

/** What applying one event did. */
export interface KycApplyResult {
  subject: KycSubject;
  /** False when the event was already reflected (duplicate) or lost to a later one: nothing to write. */
  changed: boolean;
  /** True only on the event that first made the final answer change. */
  newlyFlagged: boolean;
}

/** Thrown when an event is applied to a subject of another user: a wiring bug, never input. */
export class KycSubjectMismatchError extends Error {
  override name = 'KycSubjectMismatchError';
}

/**
 * The time of an undated rejection in its position: after every ISO time, so that a rejection whose
 * time cannot be read outranks every answer of its phase (the safe direction), as an undated approval
 * (an empty time) is outranked by every dated one.
 */
const UNDATED_REJECTION = '~';

/**
 * The position of the event a subject reflects, read with today's rules. A subject stored before
 * undated rejections had their own time holds one as `rank||id`; read so, it would now order first,
 * and any dated answer would outrank the rejection it reflects. A subject stored before callback times
 * were checked against their receipt may hold a time later than any write of it (an approval dated
 * 2099): such a time is read as undated, as the callback would be today (MAX_CALLBACK_CLOCK_SKEW_MS).
 */
function reflectedPosition(subject: KycSubject): string {
  const [rank = '', stored = '', ...id] = subject.position.split('|');
  const unbelievable = stored !== '' && stored !== UNDATED_REJECTION && Date.parse(stored) > Date.parse(subject.updatedAt) + MAX_CALLBACK_CLOCK_SKEW_MS;
  const time = unbelievable ? '' : stored;
  return time === '' && subject.decision === 'rejected' ? [rank, UNDATED_REJECTION, ...id].join('|') : [rank, time, ...id].join('|');
}

/** The ordering key of an event, `rank|time|event id`; compare two with isAfter. */
export function eventPosition(event: KycCallbackEvent, eventId: string): string {
  const time = event.occurredAt === '' && event.decision === 'rejected' ? UNDATED_REJECTION : event.occurredAt;
  return `${KYC_PHASE_RANK[event.phase]}|${time}|${eventId}`;
}

/**
 * Whether position `a` orders after `b`: rank first, then the event's time, then its id. An event
 * without a readable time (an empty time) orders before every event of its rank that has one, so an
 * undated approval never outranks a dated rejection; an undated rejection carries UNDATED_REJECTION,
 * which orders after every time. Compared field by field, not as one string: as one string, the
 * empty time's `|` sorted after every digit, so any undated event beat every dated one. Works on
 * positions stored before this function existed (same format).
 */
export function isAfter(a: string, b: string): boolean {
  const [rankA = '', timeA = '', ...idA] = a.split('|');
  const [rankB = '', timeB = '', ...idB] = b.split('|');
  if (rankA !== rankB) return Number(rankA) > Number(rankB);
  if (timeA !== timeB) return timeA === '' ? false : timeB === '' ? true : timeA > timeB;
  return idA.join('|') > idB.join('|');
}

const isFinal = (decision: KycDecision): decision is FinalKycDecision =>
  decision === 'approved' || decision === 'rejected';

/**
 * Applies one recognized callback. The subject reflects the event with the highest position (rank
 * first, so a late `pending` never undoes `completed`; then event time, so of two final answers the
 * later one wins); final decisions, the profile and the order id merge as sets/maxima. All are
 * order-independent, so any permutation or duplication of the same events converges.
 * A change of decision drops an earlier confirmation: each approval must be confirmed on its own.
 */
export function applyKycEvent(
  current: KycSubject | undefined,
  appId: string,
  event: KycCallbackEvent,
  eventId: string,
  now: Date,
): KycApplyResult {
  if (current !== undefined && (current.appId !== appId || current.userReference !== event.userReference)) {
    throw new KycSubjectMismatchError(`event for ${event.userReference} applied to subject ${current.userReference}`);
  }
  const position = eventPosition(event, eventId);
  const wins = current === undefined || isAfter(position, reflectedPosition(current));

  const seen = new Set<FinalKycDecision>(current?.finalDecisionsSeen ?? []);
  if (isFinal(event.decision)) seen.add(event.decision);
  const finalDecisionsSeen = [...seen].sort();

  const profileWins =
    event.profile !== undefined && (current?.profilePosition === undefined || isAfter(position, current.profilePosition));
  // Like the profile, the order id merges by position, not arrival: a late event that names it still counts.
  const orderWins = event.orderId !== undefined && (current?.orderPosition === undefined || isAfter(position, current.orderPosition));

  if (current !== undefined && !wins && !profileWins && !orderWins && finalDecisionsSeen.length === current.finalDecisionsSeen.length) {
    return { subject: current, changed: false, newlyFlagged: false };
  }

  const base: KycSubject = current ?? {
    appId,
    userReference: event.userReference,
    phase: event.phase,
    decision: event.decision,
    event: event.event,
    occurredAt: event.occurredAt,
    position,
    lastEventId: eventId,
    finalDecisionsSeen: [],
    decisionChanged: false,
    version: 0,
    updatedAt: now.toISOString(),
  };
  const next: KycSubject = { ...base, finalDecisionsSeen, decisionChanged: finalDecisionsSeen.length > 1, updatedAt: now.toISOString() };
  if (wins) {
    next.phase = event.phase;
    next.decision = event.decision;
    next.note = event.note;
    next.event = event.event;
    next.occurredAt = event.occurredAt;
    next.position = position;
    next.lastEventId = eventId;
    if (current !== undefined && current.decision !== event.decision) {
      next.confirmedAt = undefined;
      next.lastPull = undefined;
    }
  }
  if (profileWins) {
    next.profile = event.profile;
    next.profilePosition = position;
  }
  if (orderWins) {
    next.orderId = event.orderId;
    next.orderPosition = position;
  }
  return { subject: next, changed: true, newlyFlagged: next.decisionChanged && !(current?.decisionChanged ?? false) };
}

/** An approval that the verification-status endpoint has not confirmed yet. */
export function needsConfirmation(subject: KycSubject): boolean {
  return subject.decision === 'approved' && subject.confirmedAt === undefined;
}

/** The only state in which a subject counts as approved for money decisions. */
export function isApprovalConfirmed(subject: KycSubject): boolean {
  return subject.decision === 'approved' && subject.confirmedAt !== undefined;
}

/**
 * Records an answer of the verification-status endpoint. Only an `approved` answer while the
 * subject's own decision is approved confirms it; a `rejected` answer is a contradiction (kept,
 * logged by the caller, still not approved); anything else means "not yet", to be pulled again.
 */
export function recordPull(
  subject: KycSubject,
  providerDecision: KycDecision | undefined,
  providerStatus: string,
  now: Date,
): KycSubject {
  const outcome: KycPull['outcome'] =
    providerDecision === 'approved' ? 'confirmed' : providerDecision === 'rejected' ? 'contradicted' : 'not_yet';
  const at = now.toISOString();
  const confirms = outcome === 'confirmed' && subject.decision === 'approved';
  return {
    ...subject,
    lastPull: { at, providerStatus, outcome },
    confirmedAt: confirms ? (subject.confirmedAt ?? at) : subject.confirmedAt,
    updatedAt: at,
  };
}
