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
  /** When the callback applier applied it (ISO); absent until then, and always on an unrecognized event (never applied). */
  appliedAt?: string;
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

/**
 * Adds a stored callback to the by-reference listing: for callbacks stored before that listing existed
 * (an upgrade's one-off backfill). 'unchanged' when it was already there or has expired meanwhile.
 */
export interface ReferenceIndexBackfill {
  addToReferenceIndex(event: ReceivedEvent): Promise<'added' | 'unchanged'>;
}

/** What a callback listing is narrowed by, and which page of it. */
interface CallbackPageQuery {
  /** Only callbacks from this source. */
  source?: CallbackSource;
  /** Rows on the page. */
  limit: number;
  /** The `cursor` of the previous page; absent: the first page. */
  cursor?: string;
}

/**
 * A callback listing, newest first: the callbacks of one UTC day (`YYYY-MM-DD`), or the callbacks
 * naming one reference (the withdrawal reference of an order notification, the user reference of a
 * KYC callback), optionally only those of one day or received from a time on.
 */
export type CallbackListQuery = CallbackPageQuery & ({ day: string; reference?: undefined } | { reference: string; day?: string; receivedFrom?: Date });

/** One page of a callback listing; `cursor` is present when there may be more. */
export interface CallbackListPage {
  events: ReceivedEvent[];
  cursor?: string;
}

/** The operator's listings of stored callbacks (console, CLI): index Queries a page at a time, never a whole day read. */
export interface CallbackListing {
  listCallbacks(query: CallbackListQuery): Promise<CallbackListPage>;
}

/** Reads one stored event, body included, by its dedupe key (a catch-up's dry run, replay, the operator's look-ups). */
export interface EventLookup {
  get(eventId: string): Promise<StoredEvent | undefined>;
}

/** An event stored and not yet applied, as the not-yet-applied index lists it. */
export interface UnappliedEvent {
  eventId: string;
  receivedAt: string;
}

/** The apply state of stored events: what the callback applier and its sweep read and write. */
export interface EventApplyLog extends EventLookup {
  /**
   * Records that the event was applied, once: a conditional write that also takes it out of the
   * not-yet-applied index. False when it was already recorded (another applier got there first) or
   * the event is gone (expired).
   */
  markApplied(eventId: string, appliedAt: Date): Promise<boolean>;
  /** Recognized events still waiting to be applied, received up to `until`, oldest first across the shards, every page followed. */
  unapplied(until: Date): AsyncIterable<UnappliedEvent>;
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
