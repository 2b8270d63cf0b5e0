import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PAYOUTS_TABLE, SHARDS, watchShardOf } from '@shared/config/resources';
import type { PayoutNudge } from '@shared/ports/callbacks';
import { conditionHeld } from './conditional-write';
import { documentClient } from './dynamodb-client';
import { queryAll } from './query-all';

const REFERENCE_INDEX = PAYOUTS_TABLE.indexes[1];

/** The keys of every payout with this withdrawal_reference (the `by-withdrawal-reference` index, every page). */
export function payoutKeysByReference(client: DynamoDBDocumentClient, tableName: string, withdrawalReference: string): Promise<Array<Record<string, unknown>>> {
  return queryAll(client, {
    TableName: tableName,
    IndexName: REFERENCE_INDEX.indexName,
    KeyConditionExpression: '#ref = :ref',
    ExpressionAttributeNames: { '#ref': 'withdrawal_reference' },
    ExpressionAttributeValues: { ':ref': withdrawalReference },
  });
}

/**
 * Makes the payouts of a withdrawal_reference due for their next check now: what an order
 * notification (the applier) and a quarantined one (the receiver) do to the payouts table, and all
 * they do. Its own module, so those two bundles carry this and not the whole payout repository
 * (which reuses it for its own `markDueNow`).
 */
export function createPayoutNudge(tableName: string, client: DynamoDBDocumentClient = documentClient()): PayoutNudge {
  return {
    async markDueNow(withdrawalReference, now, options) {
      const entries = await payoutKeysByReference(client, tableName, withdrawalReference);
      let marked = 0;
      for (const item of entries) {
        // No version bump: this only moves the next check earlier, so it must not make a
        // concurrent worker's conditional write fail. A SUCCEEDED or NEEDS_REVIEW payout whose watch
        // ended comes back for one look: a notification may report returned money or a late answer.
        // A throttled nudge (a quarantined notification) also records its time and is skipped while
        // the previous one is younger than the interval.
        const throttled = options?.atMostEveryMs !== undefined;
        const nudged = await conditionHeld(
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { pk: item.pk },
              // Without a shard the condition only passes for a final payout whose watch ended: it comes
              // back under its watch partition.
              UpdateExpression: `SET #next = :now, #shard = if_not_exists(#shard, :watch)${throttled ? ', #nudged = :now' : ''}`,
              ConditionExpression: throttled
                ? '(attribute_exists(#shard) OR #state IN (:succeeded, :review)) AND (attribute_not_exists(#nudged) OR #nudged <= :cutoff)'
                : 'attribute_exists(#shard) OR #state IN (:succeeded, :review)',
              ExpressionAttributeNames: {
                '#next': 'nextCheckAt',
                '#shard': 'openShard',
                '#state': 'state',
                ...(throttled ? { '#nudged': 'mismatchNudgedAt' } : {}),
              },
              ExpressionAttributeValues: {
                ':now': now.toISOString(),
                ':watch': watchShardOf(String(item.pk), SHARDS.open),
                ':succeeded': 'SUCCEEDED',
                ':review': 'NEEDS_REVIEW',
                ...(throttled ? { ':cutoff': new Date(now.getTime() - (options?.atMostEveryMs ?? 0)).toISOString() } : {}),
              },
            }),
          ),
        );
        if (nudged) marked += 1;
      }
      return marked;
    },
  };
}
