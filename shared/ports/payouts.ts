import type { PayoutIdentity } from '@shared/domain/identity';
import type { Payout, PayoutState } from '@shared/domain/payout';
import type { PayoutStatusOutcome } from '@shared/providers/status-map';

/*
 * Ports of the payout use cases (process a payout, reconcile). Adapters implement them: DynamoDB,
 * the payout service's HTTP client, Secrets Manager, SQS. Tests and benchmarks pass their own.
 * Type-only: runtime helpers live in shared/adapters/.
 */

/** How eagerly {@link PayoutRepository.markDueNow} nudges. */
export interface MarkDueOptions {
  /**
   * Nudge a payout only if this path has not nudged it within this many milliseconds (recorded on
   * the payout as `mismatchNudgedAt`): for hints that prove nothing, such as a notification whose
   * signature does not match, so a stream of them cannot keep a payout permanently due.
   */
  atMostEveryMs?: number;
}

/** A page of payout keys from an index: the due payouts of the sparse index, or the changes of `by-state`. */
export interface DuePage {
  readonly identities: readonly PayoutIdentity[];
  /** Opaque cursor for the next page; absent on the last page. */
  readonly cursor?: string;
  /** Items the query read, for the "reads only what is open" guarantee and its test. */
  readonly scannedCount: number;
}

/** One page of payouts in one state, newest change first. */
export interface PayoutListQuery {
  readonly state: PayoutState;
  /** Only this platform_merchant_id. */
  readonly merchant?: string;
  /**
   * Only payouts requested with this user_reference (the KYC subject they were gated on). The
   * listing's index does not hold it: a filter on what is read, not a narrower read.
   */
  readonly userReference?: string;
  /** Only payouts whose last change is at or after this time. */
  readonly updatedFrom?: Date;
  /** Only payouts whose last change is at or before this time. */
  readonly updatedTo?: Date;
  /** At most this many payouts on the page (1 to 1000). */
  readonly limit: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string;
}

export interface PayoutListPage {
  readonly payouts: readonly Payout[];
  /** Present while more pages follow. */
  readonly cursor?: string;
}

/**
 * One payout at a time, read by its identity and written conditionally on what was read (see
 * ConcurrentModificationError): all the payout worker needs of the payouts table.
 */
export interface PayoutItemStore {
  get(identity: PayoutIdentity): Promise<Payout | undefined>;
  /** Stores a new payout if none exists for its identity. */
  createAccepted(payout: Payout): Promise<{ created: boolean; payout: Payout }>;
  /**
   * Writes `next` only if the stored payout still has `previous`'s state and version.
   * @throws ConcurrentModificationError otherwise
   */
  save(previous: Payout, next: Payout): Promise<Payout>;
}

/** What the reconciler's sweep and the payout checker take: the item store plus the due payouts and the reversal watch. */
export interface PayoutSweepStore extends PayoutItemStore {
  /** Open payouts with nextCheckAt <= now, oldest first. */
  queryDue(now: Date, limit: number, cursor?: string): Promise<DuePage>;
  /**
   * Keys of the payouts in a listed state (UNKNOWN or final) whose last change is at or after `from`
   * and before `to`, one page at a time, from the listing index (every shard; never a Scan). The
   * reconciler's reversal watch finds the successes of exactly a day ago, two days ago, ... this way.
   */
  queryChanged(state: PayoutState, from: Date, to: Date, limit: number, cursor?: string): Promise<DuePage>;
  /**
   * How many payouts are in a listed state (UNKNOWN or final) now, counted in the listing index
   * (every shard, every page; never a Scan, never an item read). The index is eventually consistent:
   * a payout that moved a moment ago may still be counted under its former state.
   * @throws what a failed read throws: a count that could not be finished is never a smaller number
   */
  countInState(state: PayoutState): Promise<number>;
  /**
   * The payout in a listed state (UNKNOWN or final) whose last change is the oldest, from the listing
   * index: the first entry of every shard in its `updatedAt` order (one key-only entry a shard; never
   * a Scan, never an item read), so the age of the PayoutsAwaitingReview gauge costs as little as its
   * count. Undefined when none is in the state. Eventually consistent, as countInState.
   * @throws what a failed read throws: an answer from some shards only could name a younger payout
   */
  oldestInState(state: PayoutState): Promise<LastChange | undefined>;
  /** How far the reconciler's reversal watch has got (its watermark); undefined before its first run. */
  reversalWatchProgress(): Promise<ReversalWatchProgress | undefined>;
  /**
   * Stores the reversal watch's progress if it is still `previous` (undefined: none stored yet):
   * false when another run moved it first.
   */
  saveReversalWatchProgress(previous: ReversalWatchProgress | undefined, next: ReversalWatchPosition): Promise<boolean>;
}

/** The payouts table: the sweep store plus the listings of the operator and the lookups of the callbacks. */
export interface PayoutRepository extends PayoutSweepStore {
  /**
   * Payouts in one state, newest change first, one page at a time, from an index (never a Scan).
   * @throws InvalidListCursorError for a cursor this listing did not hand out
   */
  listByState(query: PayoutListQuery): Promise<PayoutListPage>;
  /** Every payout with this withdrawal_reference (one per merchant and currency). */
  findByReference(withdrawalReference: string): Promise<Payout[]>;
  /** Makes open payouts with this reference due now (an order notification hints at news). */
  markDueNow(withdrawalReference: string, now: Date, options?: MarkDueOptions): Promise<number>;
}

/** A payout's key and the time of its last change (`updatedAt`), as the listing index holds them. */
export interface LastChange {
  readonly identity: PayoutIdentity;
  readonly changedAt: Date;
}

/** Where the reversal watch is: every look due before `coveredUntil` is done. */
export interface ReversalWatchPosition {
  readonly coveredUntil: Date;
  /**
   * A stretch [coveredUntil, until) a run began and did not finish: the look age (ms) it had got to,
   * and where in that age's pages (a `queryChanged` cursor); the next run carries on from there.
   */
  readonly pending?: { readonly until: Date; readonly ageMs: number; readonly cursor?: string };
}

/** The stored position, with the version its next save is conditional on. */
export interface ReversalWatchProgress extends ReversalWatchPosition {
  readonly version: number;
}

/** The keys and identifiers the payout service issued to the partner (camelCase form of the provider secret). */
export interface ProviderCredentials {
  partnerPublicKey: string;
  partnerSecretKey: string;
  merchantSecretKey: string;
  partnerId: string;
  platformMerchantId: string;
}

/** The provider secret, cached; `forceFetch` once after a 401 (a key reset invalidates old keys). */
export interface CredentialsSource {
  get(options?: { forceFetch?: boolean }): Promise<ProviderCredentials>;
}

/**
 * Keyed fingerprints of beneficiary accounts. payrelay stores only an account's mask, which two
 * accounts can share; the fingerprint tells them apart without storing the number, and without the
 * key it cannot be turned back into one (an account number has only about 10^10 values to try).
 */
export interface AccountFingerprints {
  /** The fingerprint of an account (its bank or network code and its full number). */
  of(account: { readonly account_code: string; readonly account_number: string }): Promise<string>;
}

export interface VerifyAccountAnswer {
  readonly success: boolean;
  readonly message?: string;
  readonly data?: { account_name?: string } | null;
}

/** Payout acceptance: `{ success, message, data: { withdrawal_reference, status } }`. */
export interface PayoutAnswer {
  readonly success?: boolean;
  readonly data?: { readonly status?: string } | null;
}

export interface PayoutStatusAnswer {
  readonly found: boolean;
  readonly status?: string;
  readonly outcome: PayoutStatusOutcome;
  readonly raw?: unknown;
}

/**
 * The payout service, as the use cases need it. PayoutServiceClient (shared/providers) implements it;
 * failures are the named errors of shared/providers/provider-errors.ts (rejected, unauthorized,
 * unavailable, ambiguous).
 */
export interface PayoutProvider {
  verifyAccount(
    request: { account_number: string; account_code: string; currency: string },
    credentials: ProviderCredentials,
  ): Promise<VerifyAccountAnswer>;
  payout(
    request: { amount: string; account_number: string; account_code: string; currency: string; withdrawal_reference: string },
    credentials: ProviderCredentials,
  ): Promise<PayoutAnswer>;
  getPayout(identity: PayoutIdentity, credentials: ProviderCredentials): Promise<PayoutStatusAnswer>;
}

/** KYC gating: approved only when the KYC service confirmed it (see shared/app/kyc-approval.ts). */
export interface KycApproval {
  check(userReference: string): Promise<'approved' | 'not_approved'>;
}

/** Where a message that cannot be processed goes, with its reason (the payouts DLQ). */
export interface DeadLetterSink {
  send(body: string, reason: string, attributes?: Record<string, string>): Promise<void>;
}

/** The payouts queue for one new payout request (a retry): the body is the request message as JSON. */
export interface PayoutRequestQueue {
  send(messageBody: string): Promise<void>;
}

/** The payouts queue as the worker sees a message it received and could not finish yet. */
export interface MessageRedelivery {
  /**
   * Makes the received message come back no earlier than `delayMs` from now (a provider's
   * Retry-After) instead of after the queue's visibility time-out.
   */
  delay(receiptHandle: string, delayMs: number): Promise<void>;
}

/**
 * The checks queue: delayed checks of open payouts, so a payout is looked at seconds after it is due
 * instead of at the next scheduled sweep. A lost message costs time, never a payout: the sweep still
 * finds every open payout in the open index.
 */
export interface PayoutCheckQueue {
  /**
   * Asks for a check of the payout while it is at `payoutVersion`, delivered no earlier than
   * `delaySeconds` from now (0 to MAX_CHECK_DELAY_SECONDS, shared/messages/payout-check.ts).
   */
  schedule(identity: PayoutIdentity, payoutVersion: number, delaySeconds: number): Promise<void>;
}
