import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { OPEN_SHARD, PAYOUTS_TABLE } from '@shared/config/resources';
import { parsePayoutKey, payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { Payout, type PayoutHistoryEntry, type PayoutRecord, type PayoutState } from '@shared/domain/payout';
import { ConcurrentModificationError, type DuePage, type PayoutRepository } from '@shared/app/ports';
import { documentClient } from './aws-clients';

const [OPEN_INDEX, REFERENCE_INDEX] = PAYOUTS_TABLE.indexes;

/** The stored item: snake_case identity fields (they key the indexes), the rest as the entity has them. */
interface PayoutItem {
  pk: string;
  platform_merchant_id: string;
  currency: string;
  withdrawal_reference: string;
  state: PayoutState;
  version: number;
  amount: string;
  account_masked: string;
  account_code: string;
  expected_name?: string;
  verified_name?: string;
  user_reference?: string;
  metadata?: Record<string, string>;
  provider_status?: string;
  submit_attempts: number;
  submit_retry_allowed?: boolean;
  resubmit_authorized?: boolean;
  not_found_since?: string;
  submit_intent_at?: string;
  checks: number;
  reason?: string;
  history: PayoutHistoryEntry[];
  createdAt: string;
  updatedAt: string;
  /** Present only while open: this is what makes the `open-by-next-check` index sparse. */
  openShard?: string;
  nextCheckAt?: string;
}

function toItem(payout: Payout): PayoutItem {
  const r = payout.record;
  const open = !payout.isFinal;
  return {
    pk: payoutKey(r.identity),
    platform_merchant_id: r.identity.platform_merchant_id,
    currency: r.identity.currency,
    withdrawal_reference: r.identity.withdrawal_reference,
    state: r.state,
    version: r.version,
    amount: r.amount,
    account_masked: r.accountMasked,
    account_code: r.accountCode,
    expected_name: r.expectedName,
    verified_name: r.verifiedName,
    user_reference: r.userReference,
    metadata: r.metadata,
    provider_status: r.providerStatus,
    submit_attempts: r.submitAttempts,
    submit_retry_allowed: r.submitRetryAllowed || undefined,
    resubmit_authorized: r.resubmitAuthorized || undefined,
    not_found_since: r.notFoundSince,
    submit_intent_at: r.submitIntentAt,
    checks: r.checks,
    reason: r.reason,
    history: [...r.history],
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    openShard: open ? OPEN_SHARD : undefined,
    nextCheckAt: open ? r.nextCheckAt : undefined,
  };
}

function fromItem(item: PayoutItem): Payout {
  const record: PayoutRecord = {
    identity: {
      platform_merchant_id: item.platform_merchant_id,
      currency: item.currency,
      withdrawal_reference: item.withdrawal_reference,
    },
    state: item.state,
    version: item.version,
    amount: item.amount,
    accountMasked: item.account_masked,
    accountCode: item.account_code,
    expectedName: item.expected_name,
    verifiedName: item.verified_name,
    userReference: item.user_reference,
    metadata: item.metadata,
    providerStatus: item.provider_status,
    submitAttempts: item.submit_attempts,
    submitRetryAllowed: item.submit_retry_allowed,
    resubmitAuthorized: item.resubmit_authorized,
    notFoundSince: item.not_found_since,
    submitIntentAt: item.submit_intent_at,
    checks: item.checks,
    nextCheckAt: item.nextCheckAt,
    reason: item.reason,
    history: item.history,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
  };
  return Payout.fromRecord(record);
}

const encodeCursor = (key: Record<string, unknown> | undefined): string | undefined =>
  key ? Buffer.from(JSON.stringify(key)).toString('base64url') : undefined;
const decodeCursor = (cursor: string | undefined): Record<string, unknown> | undefined =>
  cursor ? (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>) : undefined;

/**
 * The payouts table through the DynamoDB document client. Every write is one conditional single-item
 * write: a new payout on attribute_not_exists(pk), every later version on the expected state and
 * version, with the history list on the same item. No transactions (dynalite has none; they cost double).
 */
export function createPayoutRepository(tableName: string, client: DynamoDBDocumentClient = documentClient): PayoutRepository {
  const get = async (identity: PayoutIdentity): Promise<Payout | undefined> => {
    const out = await client.send(
      new GetCommand({ TableName: tableName, Key: { pk: payoutKey(identity) }, ConsistentRead: true }),
    );
    return out.Item ? fromItem(out.Item as PayoutItem) : undefined;
  };

  return {
    get,

    async createAccepted(payout) {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: toItem(payout),
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return { created: true, payout };
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        const existing = await get(payout.record.identity);
        if (!existing) throw new ConcurrentModificationError(`payout ${payout.key} vanished after a conflicting create`);
        return { created: false, payout: existing };
      }
    },

    async save(previous, next) {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: toItem(next),
            ConditionExpression: '#state = :state AND #version = :version',
            ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
            ExpressionAttributeValues: { ':state': previous.state, ':version': previous.version },
          }),
        );
        return next;
      } catch (error) {
        if (error instanceof ConditionalCheckFailedException) {
          throw new ConcurrentModificationError(
            `payout ${previous.key} is no longer ${previous.state} v${previous.version}`,
          );
        }
        throw error;
      }
    },

    async queryDue(now, limit, cursor) {
      const out = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: OPEN_INDEX.indexName,
          KeyConditionExpression: '#shard = :open AND #next <= :now',
          ExpressionAttributeNames: { '#shard': 'openShard', '#next': 'nextCheckAt' },
          ExpressionAttributeValues: { ':open': OPEN_SHARD, ':now': now.toISOString() },
          Limit: limit,
          ExclusiveStartKey: decodeCursor(cursor),
        }),
      );
      const identities = (out.Items ?? []).map((item) => parsePayoutKey(String(item.pk)));
      const page: DuePage = { identities, scannedCount: out.ScannedCount ?? identities.length };
      const next = encodeCursor(out.LastEvaluatedKey);
      return next ? { ...page, cursor: next } : page;
    },

    async listByState(state) {
      const payouts: Payout[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const out = await client.send(
          new ScanCommand({
            TableName: tableName,
            FilterExpression: '#state = :state',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: { ':state': state },
            ExclusiveStartKey: start,
          }),
        );
        payouts.push(...(out.Items ?? []).map((item) => fromItem(item as PayoutItem)));
        start = out.LastEvaluatedKey;
      } while (start);
      return payouts;
    },

    async markDueNow(withdrawalReference, now) {
      const out = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: REFERENCE_INDEX.indexName,
          KeyConditionExpression: '#ref = :ref',
          ExpressionAttributeNames: { '#ref': 'withdrawal_reference' },
          ExpressionAttributeValues: { ':ref': withdrawalReference },
        }),
      );
      let marked = 0;
      for (const item of out.Items ?? []) {
        try {
          // No version bump: this only moves the next check earlier, so it must not make a
          // concurrent worker's conditional write fail.
          await client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { pk: item.pk },
              UpdateExpression: 'SET #next = :now',
              ConditionExpression: 'attribute_exists(#shard)',
              ExpressionAttributeNames: { '#next': 'nextCheckAt', '#shard': 'openShard' },
              ExpressionAttributeValues: { ':now': now.toISOString() },
            }),
          );
          marked += 1;
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException)) throw error;
        }
      }
      return marked;
    },
  };
}
