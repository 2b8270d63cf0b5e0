/**
 * The one definition of payrelay's stateful resources. The CDK stateful stack and the local stack
 * both build tables, indexes, queues and secrets from these objects, so names and keys have one source.
 * Plain data only: no CDK and no AWS SDK imports, so every layer can read it.
 */

export type KeyType = 'S' | 'N';

export interface KeyDefinition {
  readonly name: string;
  readonly type: KeyType;
}

export interface IndexDefinition {
  readonly indexName: string;
  readonly partitionKey: KeyDefinition;
  readonly sortKey?: KeyDefinition;
  /** Attributes copied into the index besides the keys; `ALL` copies the whole item. */
  readonly projection: 'ALL' | 'KEYS_ONLY' | readonly string[];
}

/**
 * A table, queue or secret as a process is handed it: a stable id, also the suffix of the physical
 * name (`payrelay-<stage>-<id>`), and the env var that carries its name, URL or id. The CDK grants and
 * the local stack both set that var from here; the handlers' settings schemas read it.
 */
export interface NamedResource {
  readonly id: string;
  readonly env: string;
}

export interface TableDefinition extends NamedResource {
  readonly partitionKey: KeyDefinition;
  readonly sortKey?: KeyDefinition;
  readonly indexes: readonly IndexDefinition[];
  readonly timeToLiveAttribute?: string;
  /** A DynamoDB stream of the table's changes, with each item's image after the change (the callback applier reads it). */
  readonly stream?: 'NEW_IMAGE';
}

/** Payouts: one item per payout identity; history is a list attribute on the same item. */
export const PAYOUTS_TABLE = {
  id: 'payouts',
  env: 'PAYOUTS_TABLE_NAME',
  partitionKey: { name: 'pk', type: 'S' },
  indexes: [
    {
      // Sparse: only payouts not yet final, and final ones with a look scheduled by time, carry
      // `openShard`, so the reconciler never reads the other final payouts. Two kinds of partition,
      // each in write shards (see openShardOf, watchShardOf): `OPEN#<n>` for the payouts not yet final
      // (also what lists the worker's in-flight states), `WATCH#<n>` for NEEDS_REVIEW under its watch
      // and for a SUCCEEDED payout only while one look at it is pending (a notification named it, a
      // look failed, or the provider asked to wait). Keys only, and the worker's writes keep the
      // create's nextCheckAt, so the happy path writes this entry once and removes it once (when it
      // settles). The reversal watch of SUCCEEDED payouts reads `by-state` by age instead, so
      // settling writes no watch entry.
      indexName: 'open-by-next-check',
      partitionKey: { name: 'openShard', type: 'S' },
      sortKey: { name: 'nextCheckAt', type: 'S' },
      projection: 'KEYS_ONLY',
    },
    {
      indexName: 'by-withdrawal-reference',
      partitionKey: { name: 'withdrawal_reference', type: 'S' },
      projection: 'KEYS_ONLY',
    },
    {
      // Sparse: only payouts at rest in UNKNOWN or a final state carry `listShard` (`<state>#<n>`), so
      // the happy path writes one entry here, once. The worker's in-flight states are listed from the
      // `OPEN#<n>` partitions of `open-by-next-check`. Newest change first: query each shard backwards
      // and merge. The reconciler's reversal watch reads the `SUCCEEDED#<n>` shards by `updatedAt`:
      // a success is looked at when its last change is a day old, two days old, and so on (a success
      // nobody writes again keeps the time it settled), so no write schedules those looks.
      indexName: 'by-state',
      partitionKey: { name: 'listShard', type: 'S' },
      sortKey: { name: 'updatedAt', type: 'S' },
      projection: ['platform_merchant_id'],
    },
  ],
} as const satisfies TableDefinition;

/**
 * The one item of the payouts table that is not a payout: the reconciler's reversal-watch watermark
 * (how far its looks by age have got). A payout key always has three parts joined by '|', and this
 * item carries no index attribute, so no index and no payout read meets it; a Scan of the table does.
 */
export const REVERSAL_WATCH_MARK_KEY = 'reconciler#reversal-watch';

/** What a callback listing shows of an event, copied into the events table's listing indexes (never the body). */
const EVENT_LISTING_FIELDS = ['source', 'recognized', 'unrecognizedReason', 'appId', 'userReference', 'withdrawalReference'] as const;

/** Every authentic callback, verbatim, keyed by a dedupe key derived from its content. */
export const EVENTS_TABLE = {
  id: 'events',
  env: 'EVENTS_TABLE_NAME',
  partitionKey: { name: 'pk', type: 'S' },
  timeToLiveAttribute: 'expiresAt',
  // Inserts of recognized events trigger the callback applier in AWS (the receivers answer first).
  stream: 'NEW_IMAGE',
  indexes: [
    {
      // Callbacks by time, for listings and replay: `receivedShard` is `<YYYY-MM-DD>#<n>` (n a hash of
      // the event id, SHARDS.receivedDay shards a day), and the entry holds only what a listing shows,
      // never the body: one write unit per callback, spread over the day's shards.
      indexName: 'by-received-shard',
      partitionKey: { name: 'receivedShard', type: 'S' },
      sortKey: { name: 'receivedAt', type: 'S' },
      projection: EVENT_LISTING_FIELDS,
    },
    {
      // Legacy: events stored before the sharded index carry `receivedDay` and sit here (whole copies).
      // Nothing writes `receivedDay` any more, so it only empties as their TTL passes; it stays
      // defined so an upgrade is one CloudFormation update (which adds or removes one index at a time).
      // Remove it once EVENT_RETENTION_DAYS have passed since every stage was upgraded.
      indexName: 'by-received-day',
      partitionKey: { name: 'receivedDay', type: 'S' },
      sortKey: { name: 'receivedAt', type: 'S' },
      projection: 'ALL',
    },
    {
      // Callbacks by the reference they name, newest first: `referenceKey` is `<source>#<reference>`
      // (the withdrawal reference of an order notification, the user reference of a KYC callback),
      // present on recognized callbacks and on unrecognized ones whose body names a reference that
      // reads safely (referencesOfUnrecognized: a label to find them by, never applied). "The callbacks that named this payout" is one Query.
      // Listing fields only, like the time index: a body can be 350 KB.
      indexName: 'by-reference',
      partitionKey: { name: 'referenceKey', type: 'S' },
      sortKey: { name: 'receivedAt', type: 'S' },
      projection: EVENT_LISTING_FIELDS,
    },
    {
      // Sparse: only a recognized event not yet applied carries `applyShard` (`APPLY#<n>`, n a hash of
      // its id modulo SHARDS.unapplied); applying it REMOVEs the attribute. The sweep (and, locally,
      // the applier's driver, since dynalite has no streams) reads what is left, oldest first.
      indexName: 'not-yet-applied',
      partitionKey: { name: 'applyShard', type: 'S' },
      sortKey: { name: 'receivedAt', type: 'S' },
      projection: 'KEYS_ONLY',
    },
  ],
} as const satisfies TableDefinition;

/** KYC subjects (`SUBJECT#<app>#<user_reference>`) and KYC orders (`ORDER#<order id>`). */
export const KYC_TABLE = {
  id: 'kyc',
  env: 'KYC_TABLE_NAME',
  partitionKey: { name: 'pk', type: 'S' },
  indexes: [
    {
      // Sparse: only approvals still waiting for pull confirmation carry `unconfirmedShard`.
      indexName: 'unconfirmed-approvals',
      partitionKey: { name: 'unconfirmedShard', type: 'S' },
      sortKey: { name: 'updatedAt', type: 'S' },
      projection: 'KEYS_ONLY',
    },
  ],
} as const satisfies TableDefinition;

/**
 * Order notifications whose signature matched no configured scheme (never applied): `DAY#<day>`
 * partitions hold the notifications (sort key: the quarantine id), `HOUR#<hour>` items count them
 * against the per-hour cap. Only the payout-notification receiver writes it.
 */
export const QUARANTINE_TABLE = {
  id: 'quarantine',
  env: 'QUARANTINE_TABLE_NAME',
  partitionKey: { name: 'pk', type: 'S' },
  sortKey: { name: 'sk', type: 'S' },
  timeToLiveAttribute: 'expiresAt',
  indexes: [],
} as const satisfies TableDefinition;

/**
 * Collection orders, one item per order keyed by payrelay's order id (the provider's
 * partner_order_id); history is a list attribute on the item. `by-created-day` lists them newest
 * first by day (`createdDay` = `YYYY-MM-DD`), the way the events table is read for replay.
 */
export const COLLECTIONS_TABLE = {
  id: 'collections',
  env: 'COLLECTIONS_TABLE_NAME',
  partitionKey: { name: 'pk', type: 'S' },
  indexes: [
    {
      indexName: 'by-created-day',
      partitionKey: { name: 'createdDay', type: 'S' },
      sortKey: { name: 'createdAt', type: 'S' },
      projection: 'ALL',
    },
  ],
} as const satisfies TableDefinition;

export const TABLES = [PAYOUTS_TABLE, EVENTS_TABLE, KYC_TABLE, QUARANTINE_TABLE, COLLECTIONS_TABLE] as const;

/** A queue with its dead-letter queue (the DLQ has an env var only where a process sends to it). */
export interface QueueDefinition extends NamedResource {
  readonly deadLetterQueue: { readonly id: string; readonly env?: string };
  /** Receives before SQS moves a message to the DLQ. */
  readonly defaultMaxReceiveCount: number;
  /** How long a message may wait in the queue. */
  readonly retentionSeconds: number;
}

export const PAYOUTS_QUEUE = {
  id: 'payouts',
  env: 'PAYOUTS_QUEUE_URL',
  deadLetterQueue: { id: 'payouts-dlq', env: 'PAYOUTS_DLQ_URL' },
  defaultMaxReceiveCount: 5,
  /** 14 days, the longest SQS allows. */
  retentionSeconds: 1_209_600,
} as const satisfies QueueDefinition;

/**
 * Stream records the callback applier gave up on (every retry failed): kept for a person, alarmed.
 * The events they name stay in the not-yet-applied index, so the scheduled sweep still applies them.
 */
export const CALLBACK_APPLY_FAILURES_QUEUE = { id: 'callback-apply-failures' } as const;

/**
 * Delayed checks of open payouts (shared/messages/payout-check.ts), drained by the payout checker. A
 * check that keeps failing ends in its DLQ, which holds reminders, not payouts: the scheduled
 * reconciler still finds every open payout in the open index.
 */
export const CHECKS_QUEUE = {
  id: 'payout-checks',
  env: 'PAYOUT_CHECKS_QUEUE_URL',
  deadLetterQueue: { id: 'payout-checks-dlq' },
  defaultMaxReceiveCount: 3,
  /** A check older than a day has long been overtaken by the sweep. */
  retentionSeconds: 86_400,
} as const satisfies QueueDefinition;

/** A secret and the JSON fields it holds. Values never appear in code or templates; only these names do. */
export interface SecretDefinition extends NamedResource {
  readonly fields: readonly string[];
}

export const PROVIDER_SECRET = {
  id: 'provider',
  env: 'PROVIDER_SECRET_ID',
  fields: ['partner_public_key', 'partner_secret_key', 'merchant_secret_key', 'partner_id', 'platform_merchant_id'],
} as const satisfies SecretDefinition;

export const KYC_SECRET = {
  id: 'kyc',
  env: 'KYC_SECRET_ID',
  fields: ['app_id', 'callback_token'],
} as const satisfies SecretDefinition;

/**
 * The key of the payout items' account fingerprints (shared/adapters/account-fingerprint.ts).
 * Generated by Secrets Manager at the first deploy and never rotated: a new key would make every
 * stored fingerprint unequal to its own account's.
 */
export const ACCOUNT_KEY_SECRET = {
  id: 'account-key',
  env: 'ACCOUNT_KEY_SECRET_ID',
  fields: ['key'],
} as const satisfies SecretDefinition;

export const SECRETS = [PROVIDER_SECRET, KYC_SECRET, ACCOUNT_KEY_SECRET] as const;

/** Physical name of a table, queue or secret for a stage: `payrelay-<stage>-<id>`. */
export function resourceName(stage: string, id: string): string {
  return `payrelay-${stage}-${id}`;
}

/**
 * The value every open payout and unconfirmed approval carried before the indexes were sharded. Items
 * written by an older version may still hold it, so the readers query it besides the shards.
 */
export const LEGACY_OPEN_SHARD = 'OPEN';

/**
 * Write shards of the sparse indexes. A DynamoDB partition key takes at most 1,000 write units a
 * second; spreading entries over N keys (chosen by a hash of the item key, so an item keeps its shard
 * for life) lets the readers query the N keys in parallel. See docs/performance.md for the figures.
 */
export const SHARDS = { open: 8, byState: 4, unconfirmed: 4, receivedDay: 8, unapplied: 8 } as const;

/** A stable shard number in [0, count) for an item key (FNV-1a, 32 bit). */
export function shardOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i += 1) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

/** `openShard` of an open payout or `unconfirmedShard` of an unconfirmed approval: `OPEN#<n>`. */
export function openShardOf(itemKey: string, count: number): string {
  return `${LEGACY_OPEN_SHARD}#${shardOf(itemKey, count)}`;
}

/** Every partition a reader of a sharded sparse index queries: the shards, then the legacy key. */
export function openShardKeys(count: number): string[] {
  return [...Array.from({ length: count }, (_, n) => `${LEGACY_OPEN_SHARD}#${n}`), LEGACY_OPEN_SHARD];
}

const WATCH_SHARD = 'WATCH';

/**
 * `openShard` of a final payout still watched (SUCCEEDED, NEEDS_REVIEW): `WATCH#<n>`, the same n as
 * its `OPEN#<n>`. Kept apart so that listing the in-flight states never reads a week of successes.
 */
export function watchShardOf(itemKey: string, count: number): string {
  return `${WATCH_SHARD}#${shardOf(itemKey, count)}`;
}

/** Every watch partition of the open index (`WATCH#0` ... `WATCH#<count - 1>`). */
export function watchShardKeys(count: number): string[] {
  return Array.from({ length: count }, (_, n) => `${WATCH_SHARD}#${n}`);
}
