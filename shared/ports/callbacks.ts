import type { CallbackSource } from '@shared/domain/callbacks';
import type { MarkDueOptions } from './payouts';

/*
 * Ports of the webhook receivers' use cases. Type-only; the DynamoDB adapters implement them in
 * shared/adapters/event-store.ts and shared/adapters/payout-repository.ts.
 */

/** One received callback, exactly as stored in the events table. */
export interface StoredEvent {
  /** Dedupe key: `<source>#<sha256 of the canonical body>`. */
  eventId: string;
  source: CallbackSource;
  /** The body exactly as received (after base64 decoding), never re-serialized. */
  body: string;
  receivedAt: string;
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
  /** How it reached payrelay: absent for a delivered callback, `catch-up` when pulled from the KYC service's /responses. */
  via?: 'catch-up';
}

/**
 * A stored callback as listings see it: everything but the body and the bookkeeping. The time index
 * holds only these fields, so listing a busy day never reads the (possibly large) bodies.
 */
export type ReceivedEvent = Pick<
  StoredEvent,
  'eventId' | 'source' | 'receivedAt' | 'recognized' | 'unrecognizedReason' | 'appId' | 'userReference' | 'withdrawalReference'
>;

/** The events table. */
export interface EventStore {
  /** Stores the event unless one with the same id exists: one conditional write. */
  putOnce(event: StoredEvent): Promise<'stored' | 'duplicate'>;
  /** Events with receivedAt in [since, until), oldest first, without their bodies (EventLookup reads one whole). */
  receivedBetween(since: Date, until: Date): AsyncIterable<ReceivedEvent>;
}

/** Reads one stored event, body included, by its dedupe key (a catch-up's dry run, replay, the operator's look-ups). */
export interface EventLookup {
  get(eventId: string): Promise<StoredEvent | undefined>;
}

/**
 * Makes open payouts with this withdrawal_reference due for reconciliation now; returns how many.
 * The PayoutRepository satisfies it.
 */
export interface PayoutNudge {
  markDueNow(withdrawalReference: string, now: Date, options?: MarkDueOptions): Promise<number>;
}

/** What a receiver tells its handler: enough to answer, log and count. */
export interface WebhookReceipt {
  eventId: string;
  outcome: 'stored' | 'duplicate';
  recognized: boolean;
}
