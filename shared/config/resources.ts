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

export interface TableDefinition {
  /** Stable logical id, also the suffix of the physical name (`payrelay-<stage>-<id>`). */
  readonly id: string;
  readonly partitionKey: KeyDefinition;
  readonly sortKey?: KeyDefinition;
  readonly indexes: readonly IndexDefinition[];
  readonly timeToLiveAttribute?: string;
}

/** Payouts: one item per payout identity; history is a list attribute on the same item. */
export const PAYOUTS_TABLE = {
  id: 'payouts',
  partitionKey: { name: 'pk', type: 'S' },
  indexes: [
    {
      // Sparse: only open payouts carry `openShard`, so the reconciler never reads final ones.
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
  ],
} as const satisfies TableDefinition;

/** Every authentic callback, verbatim, keyed by a dedupe key derived from its content. */
export const EVENTS_TABLE = {
  id: 'events',
  partitionKey: { name: 'pk', type: 'S' },
  timeToLiveAttribute: 'expiresAt',
  indexes: [
    {
      indexName: 'by-received-day',
      partitionKey: { name: 'receivedDay', type: 'S' },
      sortKey: { name: 'receivedAt', type: 'S' },
      projection: 'ALL',
    },
  ],
} as const satisfies TableDefinition;

/** KYC subjects (`SUBJECT#<app>#<user_reference>`) and KYC orders (`ORDER#<order id>`). */
export const KYC_TABLE = {
  id: 'kyc',
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

export const TABLES = [PAYOUTS_TABLE, EVENTS_TABLE, KYC_TABLE] as const;

export interface QueueDefinition {
  readonly id: string;
  readonly deadLetterQueueId: string;
  /** Receives before SQS moves a message to the DLQ. */
  readonly defaultMaxReceiveCount: number;
}

export const PAYOUTS_QUEUE = {
  id: 'payouts',
  deadLetterQueueId: 'payouts-dlq',
  defaultMaxReceiveCount: 5,
} as const satisfies QueueDefinition;

/** The JSON fields of each secret. Values never appear in code or templates; only these names do. */
export const PROVIDER_SECRET = {
  id: 'provider',
  fields: ['partner_public_key', 'partner_secret_key', 'merchant_secret_key', 'partner_id', 'platform_merchant_id'],
} as const;

export const KYC_SECRET = {
  id: 'kyc',
  fields: ['app_id', 'callback_token'],
} as const;

export const SECRETS = [PROVIDER_SECRET, KYC_SECRET] as const;

/** Physical name of a table, queue or secret for a stage: `payrelay-<stage>-<id>`. */
export function resourceName(stage: string, id: string): string {
  return `payrelay-${stage}-${id}`;
}

/** The value stored in `openShard` / `unconfirmedShard`; a single shard keeps the query one page stream. */
export const OPEN_SHARD = 'OPEN';
