import { DomainError } from './errors';
import { payoutKey, type PayoutIdentity } from './identity';

/**
 * The payout state machine (docs/money-safety.md, "The payout states"):
 * ACCEPTED -> VERIFYING -> REJECTED | SUBMITTING -> SUBMITTED | UNKNOWN | FAILED;
 * SUBMITTING -> REJECTED only as a withdrawn intent (withdrawIntent: its writer never sent Payout);
 * SUBMITTED | UNKNOWN -> SUCCEEDED | FAILED | NEEDS_REVIEW;
 * NEEDS_REVIEW -> SUCCEEDED | FAILED (the provider's later definite answer, or an operator with evidence);
 * SUCCEEDED -> REVERSED (the provider reports that the delivered money came back).
 * Two extra forward edges: UNKNOWN -> SUBMITTED (the provider later confirms it holds the payout)
 * and ACCEPTED | VERIFYING | SUBMITTING -> NEEDS_REVIEW (nothing processed it in time).
 */
export const PAYOUT_STATES = [
  'ACCEPTED',
  'VERIFYING',
  'REJECTED',
  'SUBMITTING',
  'SUBMITTED',
  'UNKNOWN',
  'FAILED',
  'SUCCEEDED',
  'NEEDS_REVIEW',
  'REVERSED',
] as const;
export type PayoutState = (typeof PAYOUT_STATES)[number];

/**
 * States the processing path is done with: no message and no regular reconciliation moves them.
 * Two of them are still watched (WATCHED_STATES); the others never move again.
 */
export const FINAL_STATES: ReadonlySet<PayoutState> = new Set(['REJECTED', 'FAILED', 'SUCCEEDED', 'NEEDS_REVIEW', 'REVERSED']);

/**
 * Final states the reconciler still asks GetPayout about, at a low rate and for a bounded time:
 * NEEDS_REVIEW (a later definite answer settles it) and SUCCEEDED (returned money makes it REVERSED).
 * NEEDS_REVIEW keeps a `nextCheckAt` (its place in the reconciler's index) while watched. A SUCCEEDED
 * payout is looked at by its age instead (the reconciler reads successes by when they last changed),
 * and carries a `nextCheckAt` only while one look at it is pending: a notification named it, a look
 * failed, or the provider asked to wait.
 */
export const WATCHED_STATES: ReadonlySet<PayoutState> = new Set(['NEEDS_REVIEW', 'SUCCEEDED']);

const TRANSITIONS: Readonly<Record<PayoutState, readonly PayoutState[]>> = {
  ACCEPTED: ['VERIFYING', 'REJECTED', 'NEEDS_REVIEW'],
  VERIFYING: ['REJECTED', 'SUBMITTING', 'NEEDS_REVIEW'],
  SUBMITTING: ['SUBMITTED', 'UNKNOWN', 'FAILED', 'SUCCEEDED', 'NEEDS_REVIEW', 'REJECTED'],
  SUBMITTED: ['SUCCEEDED', 'FAILED', 'NEEDS_REVIEW'],
  UNKNOWN: ['SUBMITTED', 'SUCCEEDED', 'FAILED', 'NEEDS_REVIEW'],
  REJECTED: [],
  FAILED: [],
  SUCCEEDED: ['REVERSED'],
  NEEDS_REVIEW: ['SUCCEEDED', 'FAILED'],
  REVERSED: [],
};

/** Whether `to` is a legal forward move from `from`. */
export function canTransition(from: PayoutState, to: PayoutState): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isFinal(state: PayoutState): boolean {
  return FINAL_STATES.has(state);
}

/** A move the state machine does not allow (backwards, sideways, or out of a final state). */
export class IllegalTransitionError extends DomainError {
  override name = 'IllegalTransitionError';
  constructor(
    readonly from: PayoutState,
    readonly to: PayoutState,
  ) {
    super(`payout cannot move from ${from} to ${to}`);
  }
}

/** A Payout call was asked for a payout that may already have reached the provider. */
export class PayoutAlreadySubmittedError extends DomainError {
  override name = 'PayoutAlreadySubmittedError';
  constructor(readonly state: PayoutState) {
    super(`payout in ${state} must not be submitted again`);
  }
}

export interface PayoutHistoryEntry {
  readonly from: PayoutState | null;
  readonly to: PayoutState;
  readonly at: string;
  readonly reason: string;
  /** An operator's action: who took it, as the operator stated it (a name typed, or the identity below). */
  readonly by?: string;
  /**
   * An operator's action: the identity that ran it (the AWS caller ARN for a deployed stack, else
   * `<os user>@<hostname>`), recorded only when it differs from `by`.
   */
  readonly actor?: string;
  /** An operator's action: the evidence they gave. */
  readonly evidence?: string;
  /** An operator's action: what GetPayout answered at that moment (or why it could not be asked). */
  readonly providerAnswer?: string;
}

/** What an operator's action records besides the move itself (money-safety: who, evidence, the provider's word). */
export interface OperatorAudit {
  readonly by: string;
  /** The identity that ran the action; kept only when it differs from `by` (see operatorWho). */
  readonly actor?: string;
  readonly evidence: string;
  readonly providerAnswer: string;
}

/**
 * Who took an operator's action as the audit records it: the stated `by`, and the identity that ran
 * the action (`actor`) only when it is given and differs from `by`, so that an action whose operator
 * typed no name (`by` is then that identity) does not record it twice.
 */
export function operatorWho(by: string, actor: string | undefined): { by: string; actor?: string } {
  const ran = actor?.trim();
  return ran === undefined || ran === '' || ran === by.trim() ? { by } : { by, actor: ran };
}

/**
 * What a forced retry's history entries say, on both payouts: the first payout's "not found" did not
 * show that it was never executed, so both may be paid.
 */
export const RETRY_MAY_PAY_TWICE = 'if the first payout was executed after all, the beneficiary is paid twice';

/** Fixed wording of history entries that other parts (docs, alarms, tests) rely on. */
export const SETTLED_AFTER_REVIEW = 'settled by the provider after review';

/**
 * How a hand-over to review ends when no Payout call was made: nothing was sent yet, or the intent
 * was released as not sent. `needsReview` accepts it only then, and `mayHaveReachedProvider` reads it.
 */
export const NOTHING_PAID = 'nothing was paid';

/** The stored shape of a payout. Holds the masked account number only, never the full one. */
export interface PayoutRecord {
  readonly identity: PayoutIdentity;
  readonly state: PayoutState;
  readonly version: number;
  readonly amount: string;
  readonly accountMasked: string;
  /**
   * The account's keyed fingerprint (AccountFingerprints): tells apart two accounts with the same
   * mask. Absent on payouts stored before it existed, or created where the key was not at hand.
   */
  readonly accountFingerprint?: string;
  readonly accountCode: string;
  readonly expectedName?: string;
  readonly verifiedName?: string;
  /**
   * When a quarantined notification last made this payout due (the nudge's throttle, written by the
   * nudge itself). Carried unchanged by every version, so that a write does not reset the throttle.
   */
  readonly mismatchNudgedAt?: string;
  readonly userReference?: string;
  readonly metadata?: Record<string, string>;
  /** Last raw status word from the provider (Payout acceptance or GetPayout). */
  readonly providerStatus?: string;
  /**
   * Payout intents written (SUBMITTING, a retry or a resubmission): an upper bound on the Payout calls
   * that may have reached the provider. An intent released as not sent (a retry token) or withdrawn
   * before any call (REJECTED) still counts; its history entry says so.
   */
  readonly submitAttempts: number;
  /**
   * Set only after a Payout call failed with "unavailable" (nothing reached the provider): the next
   * delivery of the message may spend it, once, to call Payout again. See docs/payouts.md.
   */
  readonly submitRetryAllowed?: boolean;
  /** Set by the reconciler when the provider positively does not know an UNKNOWN payout (rule 1). */
  readonly resubmitAuthorized?: boolean;
  /**
   * Start of the current unbroken run of "not found" answers from GetPayout. Any answer showing the
   * provider holds the reference ends the run (cleared); the grace period counts from here.
   */
  readonly notFoundSince?: string;
  /**
   * When the provider first showed it holds this withdrawal_reference (an acceptance, a duplicate
   * refusal, any GetPayout record or status word). A fact: once set it never changes, and a payout
   * with it is never submitted again.
   */
  readonly acknowledgedAt?: string;
  /**
   * When the latest Payout call was answered with a refusal that is not on the operator's list of
   * definite refusals. The payout is UNKNOWN until GetPayout settles it; "not found" for the whole
   * grace period then means FAILED (the provider does not hold it).
   */
  readonly refusedAt?: string;
  /** When the latest submission intent was written (SUBMITTING, or a resubmission). */
  readonly submitIntentAt?: string;
  /**
   * The provider asked to be left alone until then (a Retry-After on a 429 or 503). No check is
   * scheduled earlier, whatever reschedules the payout, and the reconciler does not ask before it.
   */
  readonly askNotBefore?: string;
  /** GetPayout checks made so far; drives the back-off. */
  readonly checks: number;
  /** Next reconciliation time while open; absent once final. */
  readonly nextCheckAt?: string;
  readonly reason?: string;
  /** A retry of a FAILED payout: the withdrawal_reference of the first payout (same merchant and currency). */
  readonly retryOf?: string;
  /** Set on a FAILED payout once `payouts retry` started its replacement: that payout's withdrawal_reference. */
  readonly retriedAs?: string;
  readonly history: readonly PayoutHistoryEntry[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What a new payout is created from (already validated). */
export interface NewPayout {
  readonly identity: PayoutIdentity;
  readonly amount: string;
  readonly accountMasked: string;
  readonly accountFingerprint?: string;
  readonly accountCode: string;
  readonly expectedName?: string;
  readonly userReference?: string;
  readonly metadata?: Record<string, string>;
  readonly retryOf?: string;
}

/** How long a fresh payout waits before the reconciler first looks at it (if no message moved it). */
export const FIRST_CHECK_AFTER_MS = 60_000;

/** First look at a payout handed to a person; the reconciler then follows its review-watch settings. */
export const REVIEW_FIRST_CHECK_MS = 60 * 60_000;

/** Back-off of reconciliation checks: 1 m, 2 m, 5 m, 15 m, then hourly. */
export const CHECK_BACKOFF_MINUTES = [1, 2, 5, 15, 60] as const;

/** Delay before check number `checks + 1`. */
export function backoffMs(checks: number): number {
  const minutes = CHECK_BACKOFF_MINUTES[Math.min(checks, CHECK_BACKOFF_MINUTES.length - 1)] ?? 60;
  return minutes * 60_000;
}

/**
 * Looks at a submitted payout, in seconds after its payout intent: doubling from 10 s, so a payout the
 * provider settles S seconds after the call is final at most about S later (within a minute for one
 * settled in its first minute) after about log2(S / 10 s) + 1 GetPayout calls. Delayed check messages
 * (shared/app/reconcile-payouts.ts) keep these times; after the last step the back-off takes over.
 */
export const SUBMITTED_CHECK_SECONDS = [10, 20, 40, 80, 160, 320, 640, 1280, 2560] as const;

/** The least time between two scheduled looks at one payout. */
const MIN_CHECK_GAP_MS = 5_000;

const iso = (at: Date): string => at.toISOString();

/**
 * The next look at an open payout after check number `checks`: the next step of the submitted-payout
 * schedule (counted from its latest payout intent), else the back-off.
 */
function scheduledCheck(record: PayoutRecord, now: Date, checks: number): string {
  if (record.submitIntentAt !== undefined) {
    const intent = Date.parse(record.submitIntentAt);
    const step = SUBMITTED_CHECK_SECONDS.find((seconds) => intent + seconds * 1000 >= now.getTime() + MIN_CHECK_GAP_MS);
    if (step !== undefined) return iso(new Date(intent + step * 1000));
  }
  return iso(new Date(now.getTime() + backoffMs(checks)));
}

/**
 * A check at most `delayMs` from now: the scheduled one when it is ahead and no later than that, else
 * `now + delayMs`. Keeping the time unchanged keeps the payout's entry in the open index where it is,
 * which saves two index write units per transition (a moved index key is a delete plus a put): the
 * worker's SUBMITTING and SUBMITTED writes keep the check its create scheduled.
 */
function checkWithin(current: string | undefined, now: Date, delayMs: number): string {
  const latest = now.getTime() + delayMs;
  if (current !== undefined && Date.parse(current) > now.getTime() && Date.parse(current) <= latest) return current;
  return iso(new Date(latest));
}

/** A record whose next check comes before the provider's Retry-After gets the Retry-After's time instead. */
function notBeforeProviderAllows(record: PayoutRecord): PayoutRecord {
  const { nextCheckAt, askNotBefore } = record;
  if (nextCheckAt === undefined || askNotBefore === undefined || Date.parse(nextCheckAt) >= Date.parse(askNotBefore)) return record;
  return { ...record, nextCheckAt: askNotBefore };
}

/** The later of a time and an optional Retry-After time. */
function laterOf(at: number, notBefore: Date | undefined): number {
  return Math.max(at, notBefore?.getTime() ?? 0);
}

/**
 * A payout. Immutable: every change returns the next version, carrying its history, so the
 * repository can write it conditionally on the previous state and version. The entity enforces
 * forward-only moves and "never submitted twice" itself.
 */
export class Payout {
  private constructor(readonly record: PayoutRecord) {}

  /**
   * A new payout in ACCEPTED, due for a first look by the reconciler so it cannot be lost.
   * `retryOverride`: a retry an operator forced against the provider's "not found" for the first
   * payout; its first history entry records who, the evidence and the provider's answer, as the
   * first payout's does, so that either payout's history shows it may pay twice.
   */
  static accept(input: NewPayout, now: Date, retryOverride?: OperatorAudit): Payout {
    const at = iso(now);
    const accepted = input.retryOf ? `payout request accepted (retry of ${input.retryOf})` : 'payout request accepted';
    const first: PayoutHistoryEntry = retryOverride
      ? {
          from: null,
          to: 'ACCEPTED',
          at,
          reason: `${accepted}, forced by ${retryOverride.by} against the provider's answer for ${input.retryOf ?? ''}: ${RETRY_MAY_PAY_TWICE}`,
          ...operatorWho(retryOverride.by, retryOverride.actor),
          evidence: retryOverride.evidence,
          providerAnswer: retryOverride.providerAnswer,
        }
      : { from: null, to: 'ACCEPTED', at, reason: accepted };
    return new Payout({
      ...input,
      state: 'ACCEPTED',
      version: 1,
      submitAttempts: 0,
      checks: 0,
      nextCheckAt: iso(new Date(now.getTime() + FIRST_CHECK_AFTER_MS)),
      history: [first],
      createdAt: at,
      updatedAt: at,
    });
  }

  static fromRecord(record: PayoutRecord): Payout {
    return new Payout(record);
  }

  get key(): string {
    return payoutKey(this.record.identity);
  }
  get state(): PayoutState {
    return this.record.state;
  }
  get version(): number {
    return this.record.version;
  }
  get isFinal(): boolean {
    return isFinal(this.record.state);
  }
  /**
   * Whether the payout has a look scheduled by time (a `nextCheckAt`, its place in the reconciler's
   * index): open, NEEDS_REVIEW under its watch, or SUCCEEDED with one look pending. A SUCCEEDED
   * payout's regular reversal looks go by its age and need no schedule.
   */
  get isWatched(): boolean {
    return this.record.nextCheckAt !== undefined;
  }

  /** When the payout entered its current state (the last history entry that moved it). */
  get enteredStateAt(): string {
    const entry = [...this.record.history].reverse().find((h) => h.to === this.state && h.from !== this.state);
    return entry?.at ?? this.record.updatedAt;
  }

  /**
   * Whether a delivery of the payout request may still call Payout: only before any attempt could
   * have reached the provider, or with a one-time retry or resubmission token set by a safe path.
   */
  get maySubmit(): boolean {
    const r = this.record;
    if (r.state === 'VERIFYING' || r.state === 'ACCEPTED') return r.submitAttempts === 0;
    if (r.state === 'SUBMITTING') return r.submitRetryAllowed === true;
    if (r.state === 'UNKNOWN') return r.resubmitAuthorized === true && !this.acknowledged;
    return false;
  }

  /**
   * Whether the provider has ever shown it holds this reference. SUBMITTED counts even without
   * `acknowledgedAt` (payouts stored before the fact was recorded were accepted by the provider).
   */
  get acknowledged(): boolean {
    return this.record.acknowledgedAt !== undefined || this.state === 'SUBMITTED';
  }

  /**
   * Whether a Payout call for this payout may have reached the provider: the provider showed it (an
   * acknowledgement, a status word, a refusal), or an intent to pay was written that its writer did
   * not release as unsent (an outcome recorded as SUBMITTED or UNKNOWN, a SUBMITTING intent still
   * held, or one that left SUBMITTING otherwise than withdrawn or handed to review as unsent). Then
   * GetPayout's "not found" alone does not show the payout failed: the provider's record may lag.
   */
  get mayHaveReachedProvider(): boolean {
    const r = this.record;
    if (this.acknowledged || r.providerStatus !== undefined || r.refusedAt !== undefined) return true;
    if (r.submitAttempts === 0) return false;
    if (r.history.some((h) => h.to === 'SUBMITTED' || h.to === 'UNKNOWN')) return true;
    if (r.state === 'SUBMITTING') return r.submitRetryAllowed !== true;
    const left = r.history.findLast((h) => h.from === 'SUBMITTING' && h.to !== 'SUBMITTING');
    return !(left?.to === 'REJECTED' || (left?.to === 'NEEDS_REVIEW' && left.reason.endsWith(NOTHING_PAID)));
  }

  /** How long the current unbroken "not found" run has lasted at `now` (0 when there is none). */
  notFoundForMs(now: Date): number {
    const since = this.record.notFoundSince;
    return since === undefined ? 0 : Math.max(0, now.getTime() - Date.parse(since));
  }

  /** Age of the payout in ms at `now`. */
  ageMs(now: Date): number {
    return now.getTime() - Date.parse(this.record.createdAt);
  }

  /**
   * How long the provider has had the latest payout call at `now` (the payout's age before any):
   * a payout paid on a late retry has been pending for as long as that call, not since acceptance.
   */
  sinceLatestIntentMs(now: Date): number {
    return now.getTime() - Date.parse(this.record.submitIntentAt ?? this.record.createdAt);
  }

  private next(
    changes: Partial<PayoutRecord>,
    now: Date,
    move?: { to: PayoutState; reason: string; audit?: OperatorAudit },
  ): Payout {
    const r = this.record;
    let history = r.history;
    let state = r.state;
    if (move) {
      if (!canTransition(r.state, move.to)) throw new IllegalTransitionError(r.state, move.to);
      history = [...history, { from: r.state, to: move.to, at: iso(now), reason: move.reason, ...move.audit }];
      state = move.to;
    }
    // Any state move spends an unspent retry or resubmission token: tokens only live within one state.
    const tokens = move ? { submitRetryAllowed: undefined, resubmitAuthorized: undefined } : {};
    // `reason` says why the payout is where it is now. A move supersedes the situation the old one
    // described ("ambiguous payout outcome" is not why a payout the provider holds is SUBMITTED), so
    // a move that states no reason of its own clears it; the history keeps the old one.
    const situation = move && !('reason' in changes) ? { reason: undefined } : {};
    const merged = notBeforeProviderAllows({ ...r, ...situation, ...changes, ...tokens, state, history, version: r.version + 1, updatedAt: iso(now) });
    if (isFinal(state)) {
      const { nextCheckAt, submitRetryAllowed: _s, resubmitAuthorized: _a, ...closed } = merged;
      // A watched final state keeps the next check it was given; any other final state leaves the index.
      return new Payout(WATCHED_STATES.has(state) && nextCheckAt !== undefined ? { ...closed, nextCheckAt } : closed);
    }
    return new Payout(merged);
  }

  startVerifying(now: Date): Payout {
    return this.next({}, now, { to: 'VERIFYING', reason: 'account verification started' });
  }

  /**
   * Final refusal before any intent to pay: account not found, name mismatch, KYC, misrouted. Once an
   * intent is written only its writer may refuse the payout, through withdrawIntent.
   */
  reject(reason: string, now: Date, details: { verifiedName?: string } = {}): Payout {
    if (this.state !== 'ACCEPTED' && this.state !== 'VERIFYING') throw new IllegalTransitionError(this.state, 'REJECTED');
    return this.next({ ...details, reason }, now, { to: 'REJECTED', reason });
  }

  /**
   * Writes the intent to pay. Throws PayoutAlreadySubmittedError unless no attempt could have reached
   * the provider yet, or a one-time token (retry after "unavailable", resubmission after a positive
   * "not found") allows exactly one more call; the token is spent here.
   */
  startSubmitting(now: Date, verifiedName?: string): Payout {
    if (!this.maySubmit) throw new PayoutAlreadySubmittedError(this.state);
    const at = iso(now);
    const changes: Partial<PayoutRecord> = {
      submitAttempts: this.record.submitAttempts + 1,
      submitRetryAllowed: false,
      resubmitAuthorized: false,
      submitIntentAt: at,
      // A new call starts a new story: no not-found run and no refusal carry over to it.
      notFoundSince: undefined,
      refusedAt: undefined,
      nextCheckAt: checkWithin(this.record.nextCheckAt, now, FIRST_CHECK_AFTER_MS),
      ...(verifiedName !== undefined ? { verifiedName } : {}),
    };
    if (this.state === 'VERIFYING') {
      return this.next(changes, now, { to: 'SUBMITTING', reason: 'payout intent recorded' });
    }
    // A retry or a resubmission stays in its state: the token is spent by this conditional write.
    return this.next(changes, now);
  }

  /**
   * The account holder's name AccountVerification returned, on this same version: the intent is
   * written beside the verification, before its answer, so the name goes with the next write (the
   * outcome of the Payout call, or a retry token), where a later retry insists on the same holder.
   */
  withVerifiedName(verifiedName: string): Payout {
    if (this.state !== 'SUBMITTING') throw new IllegalTransitionError(this.state, this.state);
    return new Payout({ ...this.record, verifiedName });
  }

  /**
   * Withdraws an intent whose writer knows it never sent Payout: verification, the name policy or KYC
   * refused the payout after the intent was written beside the verification. REJECTED in one write,
   * the reason saying so. Refused (IllegalTransitionError) outside SUBMITTING and once anything shows
   * a call could have been made: more than the one intent, an acknowledgement, a provider status word
   * or a refusal. The withdrawn intent still counts in `submitAttempts` (intents written).
   */
  withdrawIntent(reason: string, now: Date, details: { verifiedName?: string } = {}): Payout {
    const r = this.record;
    const mayHaveBeenSent =
      r.submitAttempts !== 1 || this.acknowledged || r.providerStatus !== undefined || r.refusedAt !== undefined;
    if (this.state !== 'SUBMITTING' || mayHaveBeenSent) throw new IllegalTransitionError(this.state, 'REJECTED');
    const why = `intent withdrawn before any Payout call: ${reason}`;
    return this.next({ ...details, reason: why }, now, { to: 'REJECTED', reason: why });
  }

  /** The Payout call definitely did not reach the provider: allow one more attempt by a redelivery. */
  submitNotSent(now: Date, reason: string): Payout {
    if (this.state !== 'SUBMITTING' && this.state !== 'UNKNOWN') throw new IllegalTransitionError(this.state, this.state);
    return this.next({ submitRetryAllowed: this.state === 'SUBMITTING', resubmitAuthorized: this.state === 'UNKNOWN', reason }, now);
  }

  /**
   * The provider explicitly accepted the Payout call: it holds the reference from now on. The next
   * check stays where it is when it is due within a minute (`nextCheckAt` sets it instead).
   */
  submitted(providerStatus: string | undefined, now: Date, reason = 'provider accepted the payout', nextCheckAt?: string): Payout {
    return this.moveToSubmitted(providerStatus, now, { reason, nextCheckAt });
  }

  /**
   * The move to SUBMITTED. `stated`: the reason stored on the payout, when the move is news an operator
   * should read in listings (the provider holds a payout that was UNKNOWN); none for a plain acceptance.
   */
  private moveToSubmitted(providerStatus: string | undefined, now: Date, move: { reason: string; nextCheckAt?: string; stated?: string }): Payout {
    const { reason, nextCheckAt, stated } = move;
    return this.next(
      {
        ...(stated !== undefined ? { reason: stated } : {}),
        providerStatus,
        nextCheckAt: nextCheckAt ?? checkWithin(this.record.nextCheckAt, now, backoffMs(0)),
        checks: 0,
        acknowledgedAt: this.record.acknowledgedAt ?? iso(now),
        notFoundSince: undefined,
        refusedAt: undefined,
      },
      now,
      { to: 'SUBMITTED', reason },
    );
  }

  /**
   * GetPayout shows the provider holds this reference (any record, any status word that is not
   * final): the not-found run ends and the acknowledgement is recorded. SUBMITTING and UNKNOWN move
   * to SUBMITTED (the move's reason keeps the evidence in history); SUBMITTED records a check.
   */
  heldByProvider(providerStatus: string, now: Date, nextCheckAt?: Date): Payout {
    if (this.state !== 'SUBMITTED') {
      const word = providerStatus === '' ? 'a record without a status word' : providerStatus;
      const at = nextCheckAt ? iso(nextCheckAt) : scheduledCheck(this.record, now, 0);
      const reason = `provider holds the payout (${word})`;
      return this.moveToSubmitted(providerStatus, now, { reason, nextCheckAt: at, stated: reason });
    }
    const checks = this.record.checks + 1;
    return this.next(
      {
        providerStatus,
        checks,
        nextCheckAt: nextCheckAt ? iso(nextCheckAt) : scheduledCheck(this.record, now, checks),
        acknowledgedAt: this.record.acknowledgedAt ?? iso(now),
        notFoundSince: undefined,
      },
      now,
    );
  }

  /**
   * An ambiguous outcome (time-out, reset, 5xx, an unreadable or unexpected answer). A resubmission
   * that is ambiguous again stays UNKNOWN (no self-move in history). `notBefore` delays the first
   * check (a Retry-After).
   */
  unknown(reason: string, now: Date, notBefore?: Date): Payout {
    const first = laterOf(Date.parse(scheduledCheck(this.record, now, 0)), notBefore);
    const changes = { reason, nextCheckAt: iso(new Date(first)), ...(notBefore ? { askNotBefore: iso(notBefore) } : {}) };
    if (this.state === 'UNKNOWN') return this.next(changes, now);
    return this.next(changes, now, { to: 'UNKNOWN', reason });
  }

  /**
   * The Payout call was refused, and the refusal is not known to be definite: a provider may refuse
   * after it committed the payout, in any words. UNKNOWN with the provider's words as the reason,
   * due for a GetPayout check at once (or at `notBefore`). A refusal that names the reference as
   * already used (`acknowledged`) is the provider showing it holds it.
   */
  refused(reason: string, now: Date, options: { acknowledged: boolean; notBefore?: Date }): Payout {
    const changes: Partial<PayoutRecord> = {
      reason,
      refusedAt: iso(now),
      nextCheckAt: iso(new Date(laterOf(now.getTime(), options.notBefore))),
      ...(options.notBefore ? { askNotBefore: iso(options.notBefore) } : {}),
      ...(options.acknowledged ? { acknowledgedAt: this.record.acknowledgedAt ?? iso(now), notFoundSince: undefined } : {}),
    };
    if (this.state === 'UNKNOWN') return this.next(changes, now);
    return this.next(changes, now, { to: 'UNKNOWN', reason });
  }

  /**
   * Records a check GetPayout answered "not found": starts the unbroken not-found run unless one is
   * already running, and schedules the next check.
   */
  notFound(now: Date): Payout {
    // Only a payout whose Payout call may have been sent can be looked up.
    if (!['SUBMITTING', 'SUBMITTED', 'UNKNOWN'].includes(this.state)) throw new IllegalTransitionError(this.state, this.state);
    const checks = this.record.checks + 1;
    return this.next(
      { checks, nextCheckAt: scheduledCheck(this.record, now, checks), notFoundSince: this.record.notFoundSince ?? iso(now) },
      now,
    );
  }

  failed(reason: string, now: Date, providerStatus?: string): Payout {
    return this.next({ reason, providerStatus }, now, { to: 'FAILED', reason });
  }

  /**
   * The provider reports the money delivered. It leaves the reconciler's index (a NEEDS_REVIEW's
   * scheduled look goes too): its watch for returned money goes by its age, a look a day after this
   * change, two days after, and so on (shared/app/watch-final-payouts.ts), and needs no schedule.
   * From NEEDS_REVIEW the reason says it was settled by the provider after review.
   */
  succeeded(providerStatus: string, now: Date): Payout {
    const reason =
      this.state === 'NEEDS_REVIEW' ? `${SETTLED_AFTER_REVIEW}: provider reports ${providerStatus}` : `provider reports ${providerStatus}`;
    return this.next(
      { providerStatus, reason: undefined, nextCheckAt: undefined },
      now,
      { to: 'SUCCEEDED', reason },
    );
  }

  /** A person must look. The reconciler keeps asking the provider at a low rate (first look in an hour). */
  needsReview(reason: string, now: Date): Payout {
    // "Nothing was paid" is a claim other decisions rest on (resolve, retry): only where no call was made.
    const unsent = this.state === 'ACCEPTED' || this.state === 'VERIFYING' || (this.state === 'SUBMITTING' && this.record.submitRetryAllowed === true);
    if (reason.endsWith(NOTHING_PAID) && !unsent) throw new IllegalTransitionError(this.state, 'NEEDS_REVIEW');
    return this.next({ reason, nextCheckAt: iso(new Date(now.getTime() + REVIEW_FIRST_CHECK_MS)) }, now, {
      to: 'NEEDS_REVIEW',
      reason,
    });
  }

  /** The provider reports that the delivered money came back. Final; raises its own alarm. */
  reversed(reason: string, now: Date, providerStatus?: string): Payout {
    return this.next({ reason, ...(providerStatus !== undefined ? { providerStatus } : {}) }, now, { to: 'REVERSED', reason });
  }

  /**
   * An operator settles a NEEDS_REVIEW payout with evidence. The history entry records who (and the
   * identity that ran it, when that differs), the evidence and the provider's answer at that moment;
   * the use case checks that answer first.
   */
  resolveByOperator(to: 'SUCCEEDED' | 'FAILED', audit: OperatorAudit, now: Date): Payout {
    if (this.state !== 'NEEDS_REVIEW') throw new IllegalTransitionError(this.state, to);
    const reason = `resolved as ${to} by ${audit.by}: ${audit.evidence}`;
    const recorded: OperatorAudit = { ...operatorWho(audit.by, audit.actor), evidence: audit.evidence, providerAnswer: audit.providerAnswer };
    // Out of the index either way: FAILED is done, SUCCEEDED is watched by its age (see succeeded).
    return this.next({ reason, nextCheckAt: undefined }, now, { to, reason, audit: recorded });
  }

  /** A watched final payout leaves the reconciler's index: its watch period is over. */
  unwatch(now: Date): Payout {
    if (!isFinal(this.state)) throw new IllegalTransitionError(this.state, this.state);
    return this.lookOnly(this.next({ nextCheckAt: undefined }, now));
  }

  /**
   * A look at a NEEDS_REVIEW payout that found nothing new changes nothing about it: the version
   * moves (the write is conditional), its last change (`updatedAt`) does not, so the hourly looks of
   * its watch, or one a notification asked for, do not move it up the review listing's "newest
   * change first" order or into the console's "changed in the last 24 hours". A SUCCEEDED payout's
   * scheduled look does move it: the reversal watch counts its ages from that write (docs/payouts.md).
   */
  private lookOnly(next: Payout): Payout {
    return this.state === 'NEEDS_REVIEW' ? new Payout({ ...next.record, updatedAt: this.record.updatedAt }) : next;
  }

  /**
   * Links a FAILED payout to the new payout that retries it (a note in history, no state move). The
   * conditional write of this version is what makes a second, different retry impossible. `actor`:
   * the identity that ran the retry, recorded when it differs from `by`; `override`: a retry forced
   * against the provider's answer, recorded with its evidence.
   */
  retriedWith(newReference: string, by: string, now: Date, actor?: string, override?: Pick<OperatorAudit, 'evidence' | 'providerAnswer'>): Payout {
    if (this.state !== 'FAILED') throw new IllegalTransitionError(this.state, 'ACCEPTED');
    // A forced retry (against the provider's "not found") says so, with the evidence and the answer it overrode.
    const reason = override
      ? `retried as ${newReference} by ${by}, forced against the provider's answer: ${RETRY_MAY_PAY_TWICE}`
      : `retried as ${newReference} by ${by}`;
    const entry: PayoutHistoryEntry = { from: this.state, to: this.state, at: iso(now), reason, ...operatorWho(by, actor), ...override };
    const linked = this.next({ retriedAs: newReference }, now);
    return new Payout({ ...linked.record, history: [...linked.record.history, entry] });
  }

  /**
   * A racing look's answer shows the provider holds a payout that another look has just made FAILED
   * on a not-found run. FAILED is final and stays; the acknowledgement is recorded with a history
   * note, so that `payouts retry` refuses to pay it again while GetPayout does not know it.
   */
  heldAfterFailed(providerStatus: string, now: Date): Payout {
    if (this.state !== 'FAILED') throw new IllegalTransitionError(this.state, this.state);
    const word = providerStatus === '' ? 'a record without a status word' : providerStatus;
    const reason = `provider holds the payout (${word}) after all: it was made FAILED by a concurrent write; settle it with the provider before any retry`;
    const entry: PayoutHistoryEntry = { from: this.state, to: this.state, at: iso(now), reason };
    const noted = this.next({ acknowledgedAt: this.record.acknowledgedAt ?? iso(now), reason }, now);
    return new Payout({ ...noted.record, history: [...noted.record.history, entry] });
  }

  /**
   * Records a reconciliation look that did not change the state, and schedules the next one.
   * `notBefore`: the provider's Retry-After; the next check is no earlier.
   */
  checked(now: Date, details: { nextCheckAt?: Date; notBefore?: Date; providerHolds?: string } = {}): Payout {
    const checks = this.record.checks + 1;
    const nextAt = laterOf((details.nextCheckAt ?? new Date(now.getTime() + backoffMs(checks))).getTime(), details.notBefore);
    const wait = details.notBefore ? { askNotBefore: iso(details.notBefore) } : {};
    // GetPayout showed the provider holding it (a payout under review): the acknowledgement is a fact
    // kept for good, whatever the state, so that a later "not found" is never read as "never paid".
    const held =
      details.providerHolds === undefined
        ? {}
        : { providerStatus: details.providerHolds, acknowledgedAt: this.record.acknowledgedAt ?? iso(now), notFoundSince: undefined };
    return this.lookOnly(this.next({ checks, nextCheckAt: iso(new Date(nextAt)), ...wait, ...held }, now));
  }

  /** Whether the provider's last Retry-After still forbids asking about this payout at `now`. */
  mustWaitForProvider(now: Date): boolean {
    const until = this.record.askNotBefore;
    return until !== undefined && Date.parse(until) > now.getTime();
  }

  /**
   * Puts the next look off until `until` without asking the provider (it asked to be left alone, for
   * this payout or for all of them): not a check, so the back-off does not advance.
   */
  waitForProvider(until: Date, now: Date): Payout {
    const current = this.record.askNotBefore;
    const at = current !== undefined && Date.parse(current) > until.getTime() ? current : iso(until);
    // On a NEEDS_REVIEW payout this is a look put off, not a change: its last change stays (lookOnly).
    return this.lookOnly(this.next({ askNotBefore: at, nextCheckAt: at }, now));
  }

  /**
   * Rule 1's one exception: the provider has answered that it does not know this reference without
   * a break for the whole grace period, and has never acknowledged it, so one more Payout call with
   * the same reference is allowed.
   */
  authorizeResubmit(now: Date, graceMs: number): Payout {
    const since = this.record.notFoundSince;
    if (this.state !== 'UNKNOWN') throw new IllegalTransitionError(this.state, 'SUBMITTING');
    // Never after the provider showed it holds the reference, however long it forgets it afterwards.
    if (this.acknowledged || since === undefined || this.notFoundForMs(now) < graceMs) {
      throw new PayoutAlreadySubmittedError(this.state);
    }
    return this.next(
      { resubmitAuthorized: true, reason: 'provider does not know this reference; one resubmission allowed' },
      now,
    );
  }
}
