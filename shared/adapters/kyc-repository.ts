import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KYC_TABLE, SHARDS, openShardKeys, openShardOf } from '@shared/config/resources';
import { needsConfirmation, type KycSubject } from '@shared/domain/kyc-subject';
import type { KycOrderRecord, KycOrderStore, KycSubjectRef, KycSubjectStore } from '@shared/ports/kyc';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';

const [UNCONFIRMED_INDEX] = KYC_TABLE.indexes;

/** `SUBJECT#<app>#<user_reference>`, parts URI-encoded so a `#` inside a reference stays unambiguous. */
export function subjectKey(ref: KycSubjectRef): string {
  return `SUBJECT#${encodeURIComponent(ref.appId)}#${encodeURIComponent(ref.userReference)}`;
}

/** `ORDER#<order id>`. */
export function orderKey(orderId: string): string {
  return `ORDER#${encodeURIComponent(orderId)}`;
}

/** Stored subject: the entity plus the key and, while an approval waits for its pull, the sparse shard. */
type SubjectItem = KycSubject & { pk: string; itemType: 'subject'; unconfirmedShard?: string };

/** The KYC table as the receiver, the confirmation sweep and the CLI use it. */
export interface KycRepository extends KycSubjectStore, KycOrderStore {
  getOrder(orderId: string): Promise<KycOrderRecord | undefined>;
}

/**
 * KYC subjects and orders in one table. Each subject write is one conditional PutItem on the
 * version read before it (optimistic concurrency), which is what makes the rank guard race-free.
 */
export function createKycRepository(options: { tableName: string; client?: DynamoDBDocumentClient }): KycRepository {
  const client = options.client ?? documentClient();
  const tableName = options.tableName;
  return {
    async getSubject(ref) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: subjectKey(ref) }, ConsistentRead: true }));
      if (out.Item === undefined) return undefined;
      const { pk: _pk, itemType: _type, unconfirmedShard: _shard, ...subject } = out.Item as SubjectItem;
      return subject;
    },

    async saveSubject(next) {
      const item: SubjectItem = {
        ...next,
        pk: subjectKey(next),
        itemType: 'subject',
        version: next.version + 1,
        unconfirmedShard: needsConfirmation(next) ? openShardOf(subjectKey(next), SHARDS.unconfirmed) : undefined,
      };
      return conditionHeld(
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ...(next.version === 0
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : {
                  ConditionExpression: '#version = :version',
                  ExpressionAttributeNames: { '#version': 'version' },
                  ExpressionAttributeValues: { ':version': next.version },
                }),
          }),
        ),
      );
    },

    async unconfirmedApprovals(limit) {
      // Every shard at once (each read oldest update first until `limit` of its own), merged oldest
      // first: one round trip of latency instead of one per shard.
      const shards = await Promise.all(
        openShardKeys(SHARDS.unconfirmed).map(async (shard) => {
          const items: Array<Record<string, unknown>> = [];
          let cursor: Record<string, unknown> | undefined;
          do {
            const page = await client.send(
              new QueryCommand({
                TableName: tableName,
                IndexName: UNCONFIRMED_INDEX.indexName,
                KeyConditionExpression: 'unconfirmedShard = :shard',
                ExpressionAttributeValues: { ':shard': shard },
                Limit: limit - items.length,
                ExclusiveStartKey: cursor,
              }),
            );
            items.push(...(page.Items ?? []));
            cursor = page.LastEvaluatedKey;
          } while (cursor !== undefined && items.length < limit);
          return items;
        }),
      );
      const refs: KycSubjectRef[] = [];
      const oldestFirst = shards.flat().sort((a, b) => String(a.updatedAt).localeCompare(String(b.updatedAt)));
      for (const item of oldestFirst) {
        const [, appId, userReference] = String(item.pk).split('#');
        if (appId !== undefined && userReference !== undefined) refs.push({ appId: decodeURIComponent(appId), userReference: decodeURIComponent(userReference) });
        if (refs.length >= limit) break;
      }
      return refs;
    },

    async putOrder(order) {
      await client.send(new PutCommand({ TableName: tableName, Item: { pk: orderKey(order.orderId), itemType: 'order', ...order } }));
    },

    async getOrder(orderId) {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: orderKey(orderId) } }));
      if (out.Item === undefined) return undefined;
      const { pk: _pk, itemType: _type, ...order } = out.Item;
      return order as KycOrderRecord;
    },
  };
}
