/*
 * The quarantine of order notifications: well-formed notifications with the partner public key but
 * a signature no configured scheme reproduces. Type-only; shared/adapters/quarantine-store.ts keeps
 * them in DynamoDB, shared/app/quarantine.ts has the use cases.
 */

/** One quarantined notification, as kept. */
export interface QuarantinedNotification {
  /** `<YYYY-MM-DD>.<16 hex of the body's SHA-256>`: the day it arrived and what it was. */
  id: string;
  /** The body exactly as received (after decoding), never re-serialized. */
  body: string;
  receivedAt: string;
  /** The payout reference the body names, when it names one. */
  withdrawalReference?: string;
  sourceIp?: string;
  /** Epoch seconds: DynamoDB TTL. */
  expiresAt: number;
}

/** What keeping one notification did. */
export type QuarantineOutcome = 'kept' | 'duplicate' | 'hour-full';

export interface QuarantineStore {
  /**
   * Keeps the notification unless this hour already holds `maxPerHour` (a flood cannot fill the
   * table) or the same body was already kept that day.
   */
  keep(notification: QuarantinedNotification, maxPerHour: number): Promise<QuarantineOutcome>;
  /** Notifications received in [since, until), newest first, at most `limit`. */
  list(since: Date, until: Date, limit: number): Promise<QuarantinedNotification[]>;
  get(id: string): Promise<QuarantinedNotification | undefined>;
}
