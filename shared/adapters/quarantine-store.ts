import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { quarantineDayOf } from '@shared/domain/quarantine';
import type { QuarantinedNotification, QuarantineStore } from '@shared/ports/quarantine';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';

const DAY_MS = 86_400_000;

/** Partition of the notifications of one UTC day. */
const dayKey = (day: string): string => `DAY#${day}`;
/** The one counter item of one UTC hour (`YYYY-MM-DDTHH`). */
const hourKey = (receivedAt: string): string => `HOUR#${receivedAt.slice(0, 13)}`;

function toNotification(item: Record<string, unknown>): QuarantinedNotification {
  const { pk: _pk, sk: _sk, ...rest } = item;
  return rest as unknown as QuarantinedNotification;
}

/**
 * The quarantine table. Notifications of a day share the partition `DAY#<day>` (sort key: the id),
 * so listing a period is one query per day; each hour has a counter item `HOUR#<hour>` that is
 * incremented, on condition it is below the cap, before a notification is written. Everything
 * carries the TTL `expiresAt`.
 */
export function createQuarantineStore(options: { tableName: string; client?: DynamoDBDocumentClient }): QuarantineStore {
  const client = options.client ?? documentClient();
  const tableName = options.tableName;
  return {
    async keep(notification, maxPerHour) {
      const counted = await conditionHeld(
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { pk: hourKey(notification.receivedAt), sk: '-' },
            UpdateExpression: 'ADD #kept :one SET #expires = if_not_exists(#expires, :expires)',
            ConditionExpression: 'attribute_not_exists(#kept) OR #kept < :cap',
            ExpressionAttributeNames: { '#kept': 'kept', '#expires': 'expiresAt' },
            ExpressionAttributeValues: { ':one': 1, ':cap': maxPerHour, ':expires': notification.expiresAt },
          }),
        ),
      );
      if (!counted) return 'hour-full';
      const kept = await conditionHeld(
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { pk: dayKey(notification.receivedAt.slice(0, 10)), sk: notification.id, ...notification },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return kept ? 'kept' : 'duplicate';
    },

    async list(since, until, limit) {
      const found: QuarantinedNotification[] = [];
      // Newest day first; within a day, newest first after sorting (the sort key is the body hash).
      for (let day = Math.floor((until.getTime() - 1) / DAY_MS) * DAY_MS; day >= Math.floor(since.getTime() / DAY_MS) * DAY_MS; day -= DAY_MS) {
        const dayItems: QuarantinedNotification[] = [];
        let cursor: Record<string, unknown> | undefined;
        do {
          const page = await client.send(
            new QueryCommand({
              TableName: tableName,
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': dayKey(new Date(day).toISOString().slice(0, 10)) },
              ExclusiveStartKey: cursor,
            }),
          );
          dayItems.push(...(page.Items ?? []).map(toNotification));
          cursor = page.LastEvaluatedKey;
        } while (cursor !== undefined);
        const inRange = dayItems.filter((n) => n.receivedAt >= since.toISOString() && n.receivedAt < until.toISOString());
        found.push(...inRange.sort((a, b) => b.receivedAt.localeCompare(a.receivedAt)));
        if (found.length >= limit) break;
      }
      return found.slice(0, limit);
    },

    async get(id) {
      const day = quarantineDayOf(id);
      if (day === undefined) return undefined;
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: dayKey(day), sk: id } }));
      return out.Item === undefined ? undefined : toNotification(out.Item);
    },
  };
}
