import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KYC_TABLE, SHARDS, openShardKeys, openShardOf } from '@shared/config/resources';
import { isApprovalConfirmed, needsConfirmation, type KycSubject } from '@shared/domain/kyc-subject';
import { confirmKycApproval, type ConfirmKycDeps } from '@shared/app/confirm-kyc-approval';
import type { KycApprovalPort } from '@shared/app/ports';
import type { KycOrderRecord, KycOrderStorePort } from '@shared/app/create-kyc-order';
import type { KycSubjectRef, KycSubjectStorePort, KycVerificationPort } from '@shared/app/webhook-ports';
import type { KycServiceClient } from '@shared/providers/kyc-client';
import { documentClient } from './aws-clients';

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
export interface KycRepository extends KycSubjectStorePort, KycOrderStorePort {
  getOrder(orderId: string): Promise<KycOrderRecord | undefined>;
}

/**
 * KYC subjects and orders in one table. Each subject write is one conditional PutItem on the
 * version read before it (optimistic concurrency), which is what makes the rank guard race-free.
 */
export function createKycRepository(options: { tableName: string; client?: DynamoDBDocumentClient }): KycRepository {
  const client = options.client ?? documentClient;
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
      try {
        await client.send(
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
        );
        return true;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) return false;
        throw error;
      }
    },

    async unconfirmedApprovals(limit) {
      const refs: KycSubjectRef[] = [];
      // The shards one after another, oldest update first within each, until `limit` are found.
      for (const shard of openShardKeys(SHARDS.unconfirmed)) {
        let cursor: Record<string, unknown> | undefined;
        do {
          const page = await client.send(
            new QueryCommand({
              TableName: tableName,
              IndexName: UNCONFIRMED_INDEX.indexName,
              KeyConditionExpression: 'unconfirmedShard = :shard',
              ExpressionAttributeValues: { ':shard': shard },
              Limit: limit - refs.length,
              ExclusiveStartKey: cursor,
            }),
          );
          for (const item of page.Items ?? []) {
            const [, appId, userReference] = String(item.pk).split('#');
            if (appId !== undefined && userReference !== undefined) {
              refs.push({ appId: decodeURIComponent(appId), userReference: decodeURIComponent(userReference) });
            }
          }
          cursor = page.LastEvaluatedKey;
        } while (cursor !== undefined && refs.length < limit);
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

/** The verification-status endpoint (query form) as the confirmation use cases need it. */
export function kycVerifier(client: Pick<KycServiceClient, 'getVerificationStatus'>): KycVerificationPort {
  return {
    async verificationStatus(ref) {
      const answer = await client.getVerificationStatus({ app_id: ref.appId, user_reference: ref.userReference });
      return { decision: answer.decision, providerStatus: answer.status };
    },
  };
}

/** Thrown by the approval reader when the KYC service could not be asked in time. */
export class KycConfirmationUnavailableError extends Error {
  override name = 'KycConfirmationUnavailableError';
}

export interface KycApprovalReaderOptions extends ConfirmKycDeps {
  /** The KYC app the worker's users belong to (from the KYC secret). */
  appId: () => Promise<string>;
  /** Upper bound on the confirming pull; the worker must not wait on a slow provider for long. */
  pullTimeoutMs?: number;
}

/**
 * The worker's KYC gate. Approved only when the subject's approval is confirmed by the
 * verification-status endpoint; an approval still waiting is confirmed here, by one pull bounded by
 * `pullTimeoutMs`. When that pull fails, times out, or answers "not yet" (the endpoint lags the
 * callback), the answer is neither approved nor "not approved" (which would reject the payout for
 * good): it throws KycConfirmationUnavailableError so the worker retries the message later. A pull
 * that contradicts the approval (rejected) is "not approved".
 */
export function createKycApprovalReader(options: KycApprovalReaderOptions): KycApprovalPort {
  const timeoutMs = options.pullTimeoutMs ?? 3000;
  return {
    async check(userReference) {
      const ref = { appId: await options.appId(), userReference };
      const subject = await options.subjects.getSubject(ref);
      if (subject === undefined) return 'not_approved';
      if (isApprovalConfirmed(subject)) return 'approved';
      if (!needsConfirmation(subject)) return 'not_approved';
      let timer: NodeJS.Timeout | undefined;
      try {
        const confirmed = await Promise.race([
          confirmKycApproval(options, ref),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new KycConfirmationUnavailableError(`KYC confirmation took over ${timeoutMs} ms`)), timeoutMs);
          }),
        ]);
        if (confirmed !== undefined && isApprovalConfirmed(confirmed)) return 'approved';
        if (confirmed !== undefined && needsConfirmation(confirmed) && confirmed.lastPull?.outcome === 'not_yet') {
          // The callback said approved and the status endpoint has not caught up: a wait, not a refusal.
          throw new KycConfirmationUnavailableError('the KYC service has not confirmed the approval yet');
        }
        return 'not_approved';
      } catch (error) {
        if (error instanceof KycConfirmationUnavailableError) throw error;
        throw new KycConfirmationUnavailableError(`KYC confirmation failed: ${(error as Error).name}`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
