import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EVENTS_TABLE, SHARDS, shardOf } from '@shared/config/resources';
import { CALLBACK_SOURCES, receivedDayOf, referenceNamedBy, type CallbackSource } from '@shared/domain/callbacks';
import type {
  CallbackListing,
  CallbackListQuery,
  EventApplyLog,
  EventLookup,
  EventStore,
  ReceivedEvent,
  ReferenceIndexBackfill,
  StoredEvent,
} from '@shared/ports/callbacks';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';
import { decodeCursor, encodeCursor, isPartitionKey } from './list-cursor';
import { mergedQuery, type IndexPartition, type PartitionResume } from './merged-query';

const DAY_MS = 86_400_000;
const [TIME_INDEX, LEGACY_DAY_INDEX, REFERENCE_INDEX, UNAPPLIED_INDEX] = EVENTS_TABLE.indexes;
/** What a listing reads of each index entry besides the keys (the legacy day index holds whole items). */
const LISTING_FIELDS = TIME_INDEX.projection;

/** Stored item: the event plus the table's key name and its index partitions (`applyShard` only until applied). */
export type EventItem = Omit<StoredEvent, 'eventId'> & { pk: string; receivedShard: string; referenceKey?: string; applyShard?: string };

/** A stored event from its item (a GetItem answer or a stream record's image), without the index bookkeeping. */
function toEvent(item: Record<string, unknown>): StoredEvent {
  const { pk, receivedShard: _shard, receivedDay: _legacyDay, referenceKey: _reference, applyShard: _apply, ...rest } = item as EventItem & { receivedDay?: string };
  return { ...rest, eventId: pk };
}

/** A stored event from a stream record's NewImage (DynamoDB JSON). */
export function eventFromStreamImage(image: Record<string, unknown>): StoredEvent {
  return toEvent(unmarshall(image as Record<string, AttributeValue>));
}

/** The event store plus the operator's look-up of one event and listings (CLI and console), and the apply state (the callback applier). */
export interface OperatorEventStore extends EventStore, EventLookup, CallbackListing, EventApplyLog, ReferenceIndexBackfill {}

/** `applyShard` of a recognized event waiting to be applied: `APPLY#<n>`, spread like `receivedShard`. */
export function applyShardOf(eventId: string): string {
  return applyShardKey(shardOf(eventId, SHARDS.unapplied));
}

const applyShardKey = (n: number): string => `APPLY#${n}`;

/** The not-yet-applied index needs no time lower bound; every ISO timestamp sorts after this. */
const BEFORE_ANY_TIME = '0000';

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

/**
 * `referenceKey` of a callback naming a reference (a recognized one, or an unrecognized one whose body
 * names one that reads safely): `<source>#<reference>`, the partition of the `by-reference`
 * index that lists the callbacks naming that reference. An event that names none is not in the index.
 */
export function referenceKeyOf(source: CallbackSource, reference: string): string {
  return `${source}#${reference}`;
}

/** The item stored for an event: its fields under the table key, with its index partitions. */
export function toEventItem(event: StoredEvent): EventItem {
  const { eventId, ...rest } = event;
  const reference = referenceNamedBy(event);
  return {
    pk: eventId,
    ...rest,
    receivedShard: receivedShardOf(eventId, new Date(event.receivedAt)),
    ...(reference ? { referenceKey: referenceKeyOf(event.source, reference) } : {}),
  };
}

/** The partitions of the time indexes holding one UTC day: its write shards, then the legacy day key. */
function dayPartitions(day: string): IndexPartition[] {
  return [
    ...Array.from({ length: SHARDS.receivedDay }, (_, n) => ({ indexName: TIME_INDEX.indexName, keyName: TIME_INDEX.partitionKey.name, key: `${day}#${n}` })),
    { indexName: LEGACY_DAY_INDEX.indexName, keyName: LEGACY_DAY_INDEX.partitionKey.name, key: day },
  ];
}

/** The callback listing's cursor: where each partition read resumes. */
interface ListCursor {
  r: PartitionResume[];
}

/** A resume point of this listing: each key names its own partition and lies in the range read. */
function validCursor(partitions: readonly IndexPartition[], range: { from: string; to: string }) {
  return (value: unknown): value is ListCursor => {
    const resume = (value as ListCursor | null)?.r;
    return (
      Array.isArray(resume) &&
      resume.length === partitions.length &&
      resume.every((at, n) => {
        if (at === 0 || at === null) return true;
        const partition = partitions[n] as IndexPartition;
        return isPartitionKey(at, { tableKey: 'pk', partitionKey: partition.keyName, partition: partition.key, sortKey: 'receivedAt', range });
      })
    );
  };
}

/** The partitions, range and filter a listing query reads. */
function listingPlan(query: CallbackListQuery): { partitions: IndexPartition[]; range: { from: string; to: string }; bySource: boolean } {
  const dayRange = query.day === undefined ? { from: '0', to: '~' } : { from: `${query.day}T00:00:00.000Z`, to: `${query.day}T23:59:59.999Z` };
  if (query.reference === undefined) return { partitions: dayPartitions(query.day), range: dayRange, bySource: query.source !== undefined };
  const from = query.receivedFrom && query.receivedFrom.toISOString() > dayRange.from ? query.receivedFrom.toISOString() : dayRange.from;
  const sources = query.source ? [query.source] : CALLBACK_SOURCES;
  const reference = query.reference;
  return {
    partitions: sources.map((source) => ({ indexName: REFERENCE_INDEX.indexName, keyName: REFERENCE_INDEX.partitionKey.name, key: referenceKeyOf(source, reference) })),
    range: { from, to: dayRange.to },
    bySource: false,
  };
}

/**
 * The events table: every authentic callback, verbatim, once. `putOnce` is a single conditional
 * PutItem on the dedupe key, so a redelivery costs one failed condition and changes nothing.
 */
export function createEventStore(options: { tableName: string; client?: DynamoDBDocumentClient }): OperatorEventStore {
  const client = options.client ?? documentClient();
  const tableName = options.tableName;
  return {
    async get(eventId) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: eventId } }));
      return out.Item ? toEvent(out.Item) : undefined;
    },

    async putOnce(event) {
      // Only what the applier will apply waits in its index; an unrecognized event is never applied.
      const item: EventItem = { ...toEventItem(event), ...(event.recognized ? { applyShard: applyShardOf(event.eventId) } : {}) };
      const stored = await conditionHeld(client.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })));
      return stored ? 'stored' : 'duplicate';
    },

    async markApplied(eventId, appliedAt) {
      return conditionHeld(
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: eventId },
            UpdateExpression: 'SET appliedAt = :at REMOVE applyShard',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(appliedAt)',
            ExpressionAttributeValues: { ':at': appliedAt.toISOString() },
          }),
        ),
      );
    },

    async *unapplied(until) {
      // Every shard, merged oldest first: the sweep applies in arrival order.
      const merge = mergedQuery({
        client,
        tableName,
        tableKey: 'pk',
        partitions: Array.from({ length: SHARDS.unapplied }, (_, n) => ({
          indexName: UNAPPLIED_INDEX.indexName,
          keyName: UNAPPLIED_INDEX.partitionKey.name,
          key: applyShardKey(n),
        })),
        sortKey: 'receivedAt',
        range: { from: BEFORE_ANY_TIME, to: until.toISOString() },
        newestFirst: false,
      });
      for (let item = await merge.next(); item !== undefined; item = await merge.next()) {
        yield { eventId: String(item.pk), receivedAt: String(item.receivedAt) };
      }
    },

    async *receivedBetween(since, until) {
      // Per UTC day, oldest first: the day's shards and its legacy partition merged by receivedAt.
      // BETWEEN is inclusive; the range is half-open, so consecutive ranges never overlap.
      const range = { from: since.toISOString(), to: until.toISOString() };
      for (let day = Date.parse(receivedDayOf(since)); day < until.getTime(); day += DAY_MS) {
        const merge = mergedQuery({
          client,
          tableName,
          tableKey: 'pk',
          partitions: dayPartitions(receivedDayOf(new Date(day))),
          sortKey: 'receivedAt',
          range,
          newestFirst: false,
          fields: LISTING_FIELDS,
        });
        for (let item = await merge.next(); item !== undefined; item = await merge.next()) {
          if (String(item.receivedAt) < range.to) yield toReceived(item);
        }
      }
    },

    async addToReferenceIndex(event) {
      const reference = referenceNamedBy(event);
      if (reference === undefined) return 'unchanged';
      const added = await conditionHeld(
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: event.eventId },
            UpdateExpression: 'SET referenceKey = :key',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(referenceKey)',
            ExpressionAttributeValues: { ':key': referenceKeyOf(event.source, reference) },
          }),
        ),
      );
      return added ? 'added' : 'unchanged';
    },

    async listCallbacks(query) {
      const plan = listingPlan(query);
      const resume = query.cursor ? decodeCursor(query.cursor, validCursor(plan.partitions, plan.range)).r : undefined;
      const merge = mergedQuery({
        client,
        tableName,
        tableKey: 'pk',
        partitions: plan.partitions,
        sortKey: 'receivedAt',
        range: plan.range,
        newestFirst: true,
        fields: LISTING_FIELDS,
        // Unfiltered, a page of n takes about n / partitions from each: read twice that at first (a shard
        // that gives more is read again), not n from every shard. A filter may drop most of a Query page.
        pageSize: plan.bySource ? query.limit : Math.min(query.limit, Math.ceil((2 * query.limit) / plan.partitions.length) + 2),
        ...(plan.bySource ? { filter: { expression: '#source = :source', names: { '#source': 'source' }, values: { ':source': query.source } } } : {}),
        ...(resume ? { resume } : {}),
      });
      const events: ReceivedEvent[] = [];
      while (events.length < query.limit) {
        const item = await merge.next();
        if (item === undefined) break;
        events.push(toReceived(item));
      }
      const next = merge.resume();
      return next.some((at) => at !== null) ? { events, cursor: encodeCursor({ r: next }) } : { events };
    },
  };
}
