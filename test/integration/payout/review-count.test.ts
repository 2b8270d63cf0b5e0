import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPayoutRepository, type PayoutStore } from '@shared/adapters/payout-repository';
import { createPayoutSweepStore, STATE_INDEX } from '@shared/adapters/payout-sweep-store';
import { countAll } from '@shared/adapters/query-all';
import { SHARDS } from '@shared/config/resources';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import type { Payout } from '@shared/domain/payout';
import { payoutInState, type BuildableState } from '@test/factories/ports';
import { useLocalAws } from '@test/support/local-aws';

/*
 * The count behind the PayoutsAwaitingReview gauge, on dynalite: every shard of the by-state index,
 * COUNT queries only (no Scan, no item read), every page followed.
 */

const local = useLocalAws({ stage: 'review-count' });
let doc: DynamoDBDocumentClient;
let repo: PayoutStore;
/** Every command the watched client sent, by name, with its input. */
const sent: Array<{ name: string; input: Record<string, unknown> }> = [];
let watched: DynamoDBDocumentClient;

const t0 = new Date('2026-02-01T00:00:00.000Z');
const id = (ref: string): PayoutIdentity => ({ platform_merchant_id: 'm-review', currency: 'GHS', withdrawal_reference: ref });

beforeAll(() => {
  const endpoint = local().endpoints.dynamodb;
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint }), { marshallOptions: { removeUndefinedValues: true } });
  repo = createPayoutRepository(local().names.payoutsTable, doc);
  watched = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint }), { marshallOptions: { removeUndefinedValues: true } });
  const send = watched.send.bind(watched) as (command: unknown) => Promise<unknown>;
  watched.send = ((command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    sent.push({ name: command.constructor.name, input: command.input });
    return send(command);
  }) as typeof watched.send;
});

/** Stores a payout already in `state` (through the repository's own create and save). */
async function store(ref: string, state: BuildableState): Promise<Payout> {
  const built = payoutInState(state, id(ref), t0);
  const { payout } = await repo.createAccepted(payoutInState('ACCEPTED', id(ref), t0));
  return state === 'ACCEPTED' ? payout : repo.save(payout, built);
}

describe('counting the payouts in a state (by-state index)', () => {
  it('is 0 on an empty table', async () => {
    expect(await repo.countInState('NEEDS_REVIEW')).toBe(0);
  });

  it('counts the NEEDS_REVIEW payouts of every shard, and nothing in another state', async () => {
    const review: Payout[] = [];
    for (let i = 0; i < 23; i += 1) review.push(await store(`review-${i}`, 'NEEDS_REVIEW'));
    for (const [i, state] of (['SUCCEEDED', 'FAILED', 'UNKNOWN', 'SUBMITTED', 'ACCEPTED'] as const).entries()) await store(`other-${i}`, state);
    // The 23 are spread over several shards, so a count of one shard alone would fall short.
    const shards = new Set<unknown>();
    for (const p of review) shards.add((await doc.send(new GetCommand({ TableName: local().names.payoutsTable, Key: { pk: payoutKey(p.record.identity) } }))).Item?.listShard);
    expect(shards.size).toBeGreaterThan(1);

    expect(await repo.countInState('NEEDS_REVIEW')).toBe(23);
    expect(await repo.countInState('SUCCEEDED')).toBe(1);

    // Two settled: they leave NEEDS_REVIEW's shards (the index follows the item's state).
    await repo.save(review[0] as Payout, (review[0] as Payout).succeeded('COMPLETED', t0));
    await repo.save(review[1] as Payout, (review[1] as Payout).failed('settled after review: provider reports FAILED', t0, 'FAILED'));
    expect(await repo.countInState('NEEDS_REVIEW')).toBe(21);
  });

  it('reads with COUNT queries on the by-state index only: one per shard, no Scan, no item', async () => {
    sent.length = 0;
    const store = createPayoutSweepStore(local().names.payoutsTable, watched);
    expect(await store.countInState('NEEDS_REVIEW')).toBe(21);
    expect(sent).toHaveLength(SHARDS.byState);
    for (const { name, input } of sent) {
      expect(name).toBe('QueryCommand');
      expect(input).toMatchObject({ IndexName: STATE_INDEX.indexName, Select: 'COUNT' });
    }
    expect(sent.map(({ input }) => (input.ExpressionAttributeValues as Record<string, string>)[':shard']).sort()).toEqual(
      Array.from({ length: SHARDS.byState }, (_, n) => `NEEDS_REVIEW#${n}`),
    );
  });

  it('follows every page: a COUNT query cut short by a Limit still adds up to the whole count', async () => {
    // A real second page needs 1 MB of index entries; a Limit makes DynamoDB (and dynalite) stop early the same way.
    sent.length = 0;
    let total = 0;
    for (let n = 0; n < SHARDS.byState; n += 1) {
      total += await countAll(watched, {
        TableName: local().names.payoutsTable,
        IndexName: STATE_INDEX.indexName,
        KeyConditionExpression: '#shard = :shard',
        ExpressionAttributeNames: { '#shard': 'listShard' },
        ExpressionAttributeValues: { ':shard': `NEEDS_REVIEW#${n}` },
        Limit: 2,
      });
    }
    expect(total).toBe(21);
    // At least one query per 2 entries: every page was asked for, not only the first of each shard.
    expect(sent.length).toBeGreaterThanOrEqual(Math.ceil(21 / 2));
    expect(sent.filter(({ input }) => input.ExclusiveStartKey !== undefined).length).toBeGreaterThan(0);
  });

  it('refuses a state the by-state index does not hold', async () => {
    await expect(repo.countInState('SUBMITTED')).rejects.toThrow(/SUBMITTED is not kept in the by-state index/);
  });
});
