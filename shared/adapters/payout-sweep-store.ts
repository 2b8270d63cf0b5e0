import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { PAYOUTS_TABLE, REVERSAL_WATCH_MARK_KEY, SHARDS, openShardKeys, watchShardKeys } from '@shared/config/resources';
import { parsePayoutKey } from '@shared/domain/identity';
import type { DuePage, LastChange, PayoutSweepStore } from '@shared/ports/payouts';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';
import { decodeCursor, encodeCursor, isPartitionKey } from './list-cursor';
import { createPayoutItemStore, LISTED_STATES } from './payout-item-store';
import { countAll } from './query-all';

/*
 * What the reconciler's sweep and the payout checker read and write of the payouts table: the item
 * store (payout-item-store.ts) plus the due payouts, the successes to watch for a reversal and the
 * watch's progress. Its own module, apart from the console's listings and the callbacks' lookups of
 * payout-repository.ts, so the reconciler's and the checker's bundles carry only this part
 * (docs/performance.md, point 2).
 */

/** The payouts table's sparse indexes: open payouts by next check, and the listed states by last change. */
export const [OPEN_INDEX, , STATE_INDEX] = PAYOUTS_TABLE.indexes;

/** The partitions of the payouts not yet final (with the legacy key): the in-flight listings read these. */
export const IN_FLIGHT_KEYS = openShardKeys(SHARDS.open);
/** Every partition of the open index, in the order the reconciler reads them: not yet final first, then watched. */
const DUE_KEYS = [...IN_FLIGHT_KEYS, ...watchShardKeys(SHARDS.open)];
/** A DynamoDB key or item as the document client hands it back. */
export type Key = Record<string, unknown>;

/** A cursor over index partitions read one after another: which partition, and where in it. */
interface ShardCursor {
  s: number;
  k?: Key;
}

/** The index a keysAcrossShards read goes through: its partition and sort key attributes. */
interface ShardIndex {
  readonly partitionKey: { readonly name: string };
  readonly sortKey: { readonly name: string };
}

/**
 * A cursor of a read over these partitions of this index: a partition's number and, within it, the
 * key its Query stopped at (the table key and the index keys, nothing else, all strings, naming that
 * partition). The reconciler keeps these between runs (the reversal watch's progress); one that is
 * not such a cursor is refused as such rather than sent to DynamoDB.
 */
const isShardCursorOf =
  (shards: readonly string[], index: ShardIndex) =>
  (v: unknown): v is ShardCursor => {
    if (typeof v !== 'object' || v === null || !Object.keys(v).every((name) => name === 's' || name === 'k')) return false;
    const { s, k } = v as { s: unknown; k?: unknown };
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 0 || s >= shards.length) return false;
    return k === undefined || isPartitionKey(k, { tableKey: 'pk', partitionKey: index.partitionKey.name, partition: shards[s] as string, sortKey: index.sortKey.name });
  };

/** The stored shape of the reversal watch's progress (see ReversalWatchProgress). */
interface WatchMarkItem {
  pk: typeof REVERSAL_WATCH_MARK_KEY;
  coveredUntil: string;
  version: number;
  pendingUntil?: string;
  pendingAgeMs?: number;
  pendingCursor?: string;
}

/** The payout sweep store over the document client (see PayoutSweepStore); every index read is a Query, never a Scan. */
export function createPayoutSweepStore(tableName: string, given?: DynamoDBDocumentClient): PayoutSweepStore {
  const client = given ?? documentClient();
  // The item writes go through payoutItemWriter() unless a client was given (see createPayoutItemStore).
  const items = createPayoutItemStore(tableName, given);

  /**
   * One page of payout keys from index partitions read one after another, each in its index order;
   * a partition with nothing left is skipped rather than handed back as an empty page.
   */
  async function keysAcrossShards(
    index: ShardIndex,
    shards: readonly string[],
    query: (shard: string) => QueryCommandInput,
    limit: number,
    cursor?: string,
  ): Promise<DuePage> {
    let at: ShardCursor = cursor ? decodeCursor(cursor, isShardCursorOf(shards, index)) : { s: 0 };
    for (;;) {
      const out = await client.send(new QueryCommand({ ...query(shards[at.s] as string), Limit: limit, ExclusiveStartKey: at.k }));
      const identities = (out.Items ?? []).map((item) => parsePayoutKey(String(item.pk)));
      const page: DuePage = { identities, scannedCount: out.ScannedCount ?? identities.length };
      const nextShard = at.s + 1 < shards.length ? { s: at.s + 1 } : undefined;
      const next: ShardCursor | undefined = out.LastEvaluatedKey ? { s: at.s, k: out.LastEvaluatedKey } : nextShard;
      if (identities.length === 0 && next && !out.LastEvaluatedKey) {
        at = next;
        continue;
      }
      return next ? { ...page, cursor: encodeCursor(next) } : page;
    }
  }

  return {
    ...items,

    async queryDue(now, limit, cursor) {
      // One shard after another (not yet final, then watched); within a shard, oldest due first.
      return keysAcrossShards(
        OPEN_INDEX,
        DUE_KEYS,
        (shard) => ({
          TableName: tableName,
          IndexName: OPEN_INDEX.indexName,
          KeyConditionExpression: '#shard = :open AND #next <= :now',
          ExpressionAttributeNames: { '#shard': 'openShard', '#next': 'nextCheckAt' },
          ExpressionAttributeValues: { ':open': shard, ':now': now.toISOString() },
        }),
        limit,
        cursor,
      );
    },

    async queryChanged(state, from, to, limit, cursor) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      // [from, to): BETWEEN is inclusive, and every stored time is an ISO string to the millisecond.
      const last = new Date(to.getTime() - 1).toISOString();
      return keysAcrossShards(
        STATE_INDEX,
        Array.from({ length: SHARDS.byState }, (_, n) => `${state}#${n}`),
        (shard) => ({
          TableName: tableName,
          IndexName: STATE_INDEX.indexName,
          KeyConditionExpression: '#shard = :shard AND #updated BETWEEN :from AND :last',
          ExpressionAttributeNames: { '#shard': 'listShard', '#updated': 'updatedAt' },
          ExpressionAttributeValues: { ':shard': shard, ':from': from.toISOString(), ':last': last },
        }),
        limit,
        cursor,
      );
    },

    async countInState(state) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      // Every shard at once, each to its last page: one Query of index keys per shard when few match.
      const shards = await Promise.all(
        Array.from({ length: SHARDS.byState }, (_, n) =>
          countAll(client, {
            TableName: tableName,
            IndexName: STATE_INDEX.indexName,
            KeyConditionExpression: '#shard = :shard',
            ExpressionAttributeNames: { '#shard': 'listShard' },
            ExpressionAttributeValues: { ':shard': `${state}#${n}` },
          }),
        ),
      );
      return shards.reduce((sum, n) => sum + n, 0);
    },

    async oldestInState(state) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      // Each shard's first entry in updatedAt order (ascending), all shards at once; the oldest of those
      // is the oldest of the state. Limit 1 reads one key entry a shard, however many wait.
      const firsts = await Promise.all(
        Array.from({ length: SHARDS.byState }, async (_, n) => {
          const out = await client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: STATE_INDEX.indexName,
              KeyConditionExpression: '#shard = :shard',
              ExpressionAttributeNames: { '#shard': 'listShard', '#pk': 'pk', '#updated': 'updatedAt' },
              ExpressionAttributeValues: { ':shard': `${state}#${n}` },
              ProjectionExpression: '#pk, #updated',
              ScanIndexForward: true,
              Limit: 1,
            }),
          );
          const item = out.Items?.[0];
          return item === undefined ? undefined : { identity: parsePayoutKey(String(item.pk)), changedAt: new Date(String(item.updatedAt)) };
        }),
      );
      return firsts.reduce<LastChange | undefined>((oldest, entry) => (entry !== undefined && (oldest === undefined || entry.changedAt < oldest.changedAt) ? entry : oldest), undefined);
    },

    async reversalWatchProgress() {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: REVERSAL_WATCH_MARK_KEY }, ConsistentRead: true }));
      const item = out.Item as WatchMarkItem | undefined;
      if (!item) return undefined;
      const pending = item.pendingUntil === undefined ? undefined : { until: new Date(item.pendingUntil), ageMs: item.pendingAgeMs ?? 0, ...(item.pendingCursor ? { cursor: item.pendingCursor } : {}) };
      return { coveredUntil: new Date(item.coveredUntil), version: item.version, ...(pending ? { pending } : {}) };
    },

    async saveReversalWatchProgress(previous, next) {
      const item: WatchMarkItem = {
        pk: REVERSAL_WATCH_MARK_KEY,
        coveredUntil: next.coveredUntil.toISOString(),
        version: (previous?.version ?? 0) + 1,
        pendingUntil: next.pending?.until.toISOString(),
        pendingAgeMs: next.pending?.ageMs,
        pendingCursor: next.pending?.cursor,
      };
      return conditionHeld(
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ConditionExpression: previous === undefined ? 'attribute_not_exists(pk)' : '#version = :version',
            ...(previous === undefined ? {} : { ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':version': previous.version } }),
          }),
        ),
      );
    },
  };
}
