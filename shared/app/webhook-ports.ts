import type { CallbackSource } from '@shared/domain/callbacks';
import type { KycSubject } from '@shared/domain/kyc-subject';
import type { KycDecision } from '@shared/domain/kyc-status';

/**
 * Ports of the webhook receiver's use cases. The DynamoDB adapters implement them in
 * @shared/adapters/event-store and @shared/adapters/kyc-repository; tests may use any other.
 */

/** One received callback, exactly as stored in the events table. */
export interface StoredEvent {
  /** Dedupe key: `<source>#<sha256 of the canonical body>`. */
  eventId: string;
  source: CallbackSource;
  /** The body exactly as received (after base64 decoding), never re-serialized. */
  body: string;
  receivedAt: string;
  /** `YYYY-MM-DD` of receivedAt (UTC): the partition of the replay index. */
  receivedDay: string;
  recognized: boolean;
  /** Why an authentic payload was not recognized. */
  unrecognizedReason?: string;
  /** Epoch seconds: DynamoDB TTL. */
  expiresAt: number;
  /** KYC app the callback belongs to (from the KYC secret at receipt time). */
  appId?: string;
  userReference?: string;
  withdrawalReference?: string;
  sourceIp?: string;
}

export interface EventStorePort {
  /** Stores the event unless one with the same id exists: one conditional write. */
  putOnce(event: StoredEvent): Promise<'stored' | 'duplicate'>;
  /** Events with receivedAt in [since, until), oldest first. */
  receivedBetween(since: Date, until: Date): AsyncIterable<StoredEvent>;
}

/** Identifies a KYC subject. */
export interface KycSubjectRef {
  appId: string;
  userReference: string;
}

export interface KycSubjectStorePort {
  getSubject(ref: KycSubjectRef): Promise<KycSubject | undefined>;
  /**
   * Saves `next` with version `next.version + 1`, on condition that the stored subject still has
   * `next.version` (or does not exist when that is 0). Returns false when someone else wrote first:
   * the caller re-reads and re-applies.
   */
  saveSubject(next: KycSubject): Promise<boolean>;
  /** Approvals waiting for pull confirmation (the sparse `unconfirmed-approvals` index). */
  unconfirmedApprovals(limit: number): Promise<KycSubjectRef[]>;
}

/** The provider's answer about one user, reduced to what the projection needs. */
export interface KycVerificationAnswer {
  decision: KycDecision | undefined;
  /** The word the provider used, kept for the record. */
  providerStatus: string;
}

/** The KYC service's verification-status endpoint: the authority on approvals. */
export interface KycVerificationPort {
  verificationStatus(ref: KycSubjectRef): Promise<KycVerificationAnswer>;
}

/**
 * Makes open payouts with this withdrawal_reference due for reconciliation now; returns how many.
 * The worker's PayoutRepository satisfies it.
 */
export interface PayoutNudgePort {
  markDueNow(withdrawalReference: string, now: Date): Promise<number>;
}

/** A cached secret as @shared/adapters/secrets returns it. */
export interface SecretSource<T> {
  get(options?: { forceFetch?: boolean }): Promise<T>;
}

/** A secret that may be re-read once after a mismatch, at most once per interval. */
export interface RefreshableSecret<T> {
  get(): Promise<T>;
  /** A fresh read, or undefined when one was made less than the interval ago. */
  refresh(): Promise<T | undefined>;
}

/**
 * Wraps a cached secret so a mismatch can re-read it (keys may just have been reset or rotated)
 * without letting a stream of forged callbacks turn into a stream of Secrets Manager calls.
 */
export function refreshable<T>(source: SecretSource<T>, clock: { now(): Date }, minIntervalMs = 30_000): RefreshableSecret<T> {
  let lastRefresh = Number.NEGATIVE_INFINITY;
  return {
    get: () => source.get(),
    async refresh() {
      const now = clock.now().getTime();
      if (now - lastRefresh < minIntervalMs) return undefined;
      lastRefresh = now;
      return source.get({ forceFetch: true });
    },
  };
}

/** What a receiver tells its handler: enough to answer, log and count. */
export interface WebhookReceipt {
  eventId: string;
  outcome: 'stored' | 'duplicate';
  recognized: boolean;
}

/** `YYYY-MM-DD` (UTC) of a time: the partition key of the events table's `by-received-day` index. */
export function receivedDayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** Retention of stored events, from EVENT_RETENTION_DAYS; becomes the item's TTL. */
export function expiresAtFor(receivedAt: Date, retentionDays: number): number {
  return Math.floor(receivedAt.getTime() / 1000) + retentionDays * 86_400;
}
