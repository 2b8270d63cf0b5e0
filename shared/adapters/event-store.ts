import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EVENTS_TABLE, SHARDS, shardOf } from '@shared/config/resources';
import { receivedDayOf } from '@shared/domain/callbacks';
import type { EventLookup, EventStore, ReceivedEvent, StoredEvent } from '@shared/ports/callbacks';
import { documentClient } from './dynamodb-client';

const DAY_MS = 86_400_000;
const [TIME_INDEX, LEGACY_DAY_INDEX] = EVENTS_TABLE.indexes;

/** Stored item: the event plus the table's key name and its time-index partition. */
type EventItem = Omit<StoredEvent, 'eventId'> & { pk: string; receivedShard: string };

function toEvent(item: Record<string, unknown>): StoredEvent {
  const { pk, receivedShard: _shard, receivedDay: _legacyDay, ...rest } = item as EventItem & { receivedDay?: string };
  return { ...rest, eventId: pk };
}

/** The event store plus the operator's look-up of one event (CLI and console). */
export interface OperatorEventStore extends EventStore, EventLookup {}

function toReceived(item: Record<string, unknown>): ReceivedEvent {
  const { eventId, source, receivedAt, recognized, unrecognizedReason, appId, userReference, withdrawalReference } = toEvent(item);
  return { eventId, source, receivedAt, recognized, unrecognizedReason, appId, userReference, withdrawalReference };
}

/**
 * `receivedShard` of an event: its UTC day and a shard chosen by a hash of its id, so 1,000
 * callbacks a second spread over SHARDS.receivedDay partitions instead of one per day.
 */
export function receivedShardOf(eventId: string, receivedAt: Date): string {
  return `${receivedDayOf(receivedAt)}#${shardOf(eventId, SHARDS.receivedDay)}`;
}

/** One Query stream of a day partition, in receivedAt order, every page followed. */
async function* queryPartition(
  client: DynamoDBDocumentClient,
  input: { tableName: string; indexName: string; keyName: string; key: string; since: string; until: string },
): AsyncGenerator<Record<string, unknown>> {
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: input.tableName,
        IndexName: input.indexName,
        KeyConditionExpression: '#key = :key AND receivedAt BETWEEN :since AND :until',
        ExpressionAttributeNames: { '#key': input.keyName },
        ExpressionAttributeValues: { ':key': input.key, ':since': input.since, ':until': input.until },
        ExclusiveStartKey: cursor,
      }),
    );
    yield* page.Items ?? [];
    cursor = page.LastEvaluatedKey;
  } while (cursor !== undefined);
}

/**
 * Merges streams that are each sorted by receivedAt into one sorted stream. Each stream holds at
 * most one Query page in memory, so a day of millions of callbacks is read, never collected.
 */
async function* mergeByReceivedAt(streams: AsyncGenerator<Record<string, unknown>>[]): AsyncGenerator<Record<string, unknown>> {
  const heads = await Promise.all(streams.map((s) => s.next()));
  for (;;) {
    let pick = -1;
    for (let i = 0; i < heads.length; i += 1) {
      const head = heads[i];
      if (head === undefined || head.done === true) continue;
      const best = pick >= 0 ? heads[pick] : undefined;
      if (best === undefined || best.done === true || String(head.value.receivedAt) < String(best.value.receivedAt)) pick = i;
    }
    if (pick < 0) return;
    const chosen = heads[pick] as IteratorYieldResult<Record<string, unknown>>;
    yield chosen.value;
    heads[pick] = await (streams[pick] as AsyncGenerator<Record<string, unknown>>).next();
  }
}

/**
 * The events table: every authentic callback, verbatim, once. `putOnce` is a single conditional
 * PutItem on the dedupe key, so a redelivery costs one failed condition and changes nothing.
 */
export function createEventStore(options: { tableName: string; client?: DynamoDBDocumentClient }): OperatorEventStore {
  const client = options.client ?? documentClient;
  const tableName = options.tableName;
  return {
    async get(eventId) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: eventId } }));
      return out.Item ? toEvent(out.Item) : undefined;
    },

    async putOnce(event) {
      const { eventId, ...rest } = event;
      const item: EventItem = { pk: eventId, ...rest, receivedShard: receivedShardOf(eventId, new Date(event.receivedAt)) };
      try {
        await client.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
        return 'stored';
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return 'duplicate';
        throw error;
      }
    },

    async *receivedBetween(since, until) {
      // Per UTC day, oldest first: the day's shards and its legacy partition, queried in parallel
      // and merged by receivedAt. BETWEEN is inclusive; the range is half-open, so consecutive
      // ranges never overlap.
      const bounds = { tableName, since: since.toISOString(), until: until.toISOString() };
      for (let day = Date.parse(receivedDayOf(since)); day < until.getTime(); day += DAY_MS) {
        const dayKey = receivedDayOf(new Date(day));
        const streams = Array.from({ length: SHARDS.receivedDay }, (_, n) =>
          queryPartition(client, { ...bounds, indexName: TIME_INDEX.indexName, keyName: TIME_INDEX.partitionKey.name, key: `${dayKey}#${n}` }),
        );
        streams.push(queryPartition(client, { ...bounds, indexName: LEGACY_DAY_INDEX.indexName, keyName: LEGACY_DAY_INDEX.partitionKey.name, key: dayKey }));
        for await (const item of mergeByReceivedAt(streams)) {
          if (String(item.receivedAt) < bounds.until) yield toReceived(item);
        }
      }
    },
  };
}
