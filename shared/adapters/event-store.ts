import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { EVENTS_TABLE } from '@shared/config/resources';
import { receivedDayOf } from '@shared/domain/callbacks';
import type { EventLookup, EventStore, StoredEvent } from '@shared/ports/callbacks';
import { documentClient } from './dynamodb-client';

const DAY_MS = 86_400_000;

/** Stored item: the event plus the table's key name. */
type EventItem = Omit<StoredEvent, 'eventId'> & { pk: string };

function toEvent(item: Record<string, unknown>): StoredEvent {
  const { pk, ...rest } = item as EventItem;
  return { ...rest, eventId: pk };
}

/** The event store plus the operator's look-up of one event (CLI and console). */
export interface OperatorEventStore extends EventStore, EventLookup {}

/**
 * The events table: every authentic callback, verbatim, once. `putOnce` is a single conditional
 * PutItem on the dedupe key, so a redelivery costs one failed condition and changes nothing.
 */
export function createEventStore(options: { tableName: string; client?: DynamoDBDocumentClient }): OperatorEventStore {
  const client = options.client ?? documentClient;
  const tableName = options.tableName;
  const indexName = EVENTS_TABLE.indexes[0].indexName;
  return {
    async get(eventId) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: eventId } }));
      return out.Item ? toEvent(out.Item) : undefined;
    },

    async putOnce(event) {
      const { eventId, ...rest } = event;
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: eventId, ...rest },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return 'stored';
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return 'duplicate';
        throw error;
      }
    },

    async *receivedBetween(since, until) {
      // One query stream per UTC day, oldest day first; each day's page is sorted by receivedAt.
      for (let day = Date.parse(receivedDayOf(since)); day < until.getTime(); day += DAY_MS) {
        let cursor: Record<string, unknown> | undefined;
        do {
          const page = await client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: indexName,
              KeyConditionExpression: 'receivedDay = :day AND receivedAt BETWEEN :since AND :until',
              ExpressionAttributeValues: {
                ':day': receivedDayOf(new Date(day)),
                ':since': since.toISOString(),
                ':until': until.toISOString(),
              },
              ExclusiveStartKey: cursor,
            }),
          );
          for (const item of page.Items ?? []) {
            const event = toEvent(item);
            // BETWEEN is inclusive; the range is half-open so consecutive ranges never overlap.
            if (event.receivedAt < until.toISOString()) yield event;
          }
          cursor = page.LastEvaluatedKey;
        } while (cursor !== undefined);
      }
    },
  };
}
