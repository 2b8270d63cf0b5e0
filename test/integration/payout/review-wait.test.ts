import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPayoutRepository, type PayoutStore } from '@shared/adapters/payout-repository';
import { createPayoutSweepStore, STATE_INDEX } from '@shared/adapters/payout-sweep-store';
import { SHARDS, shardOf } from '@shared/config/resources';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import type { Payout } from '@shared/domain/payout';
import { payoutInState, type BuildableState } from '@test/factories/ports';
import { useLocalAws } from '@test/support/local-aws';

/*
 * The read behind OldestPayoutAwaitingReviewSeconds, on dynalite: the first entry of every by-state
 * shard in updatedAt order (ascending, one entry each), the oldest of those across the shards; no
 * Scan, no item read.
 */

const local = useLocalAws({ stage: 'review-wait' });
let repo: PayoutStore;
/** Every command the watched client sent, by name, with its input. */
const sent: Array<{ name: string; input: Record<string, unknown> }> = [];
let watched: DynamoDBDocumentClient;

const HOUR = 60 * 60_000;
const t0 = new Date('2026-03-01T00:00:00.000Z');
const at = (hours: number): Date => new Date(t0.getTime() + hours * HOUR);
const id = (ref: string): PayoutIdentity => ({ platform_merchant_id: 'm-wait', currency: 'GHS', withdrawal_reference: ref });

/** A reference whose payout lands in by-state shard `shard` (the shards are a hash of the key). */
function referenceInShard(prefix: string, shard: number): string {
  for (let i = 0; ; i += 1) {
    const ref = `${prefix}-${i}`;
    if (shardOf(payoutKey(id(ref)), SHARDS.byState) === shard) return ref;
  }
}

beforeAll(() => {
  const endpoint = local().endpoints.dynamodb;
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint }), { marshallOptions: { removeUndefinedValues: true } });
  repo = createPayoutRepository(local().names.payoutsTable, doc);
  watched = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint }), { marshallOptions: { removeUndefinedValues: true } });
  const send = watched.send.bind(watched) as (command: unknown) => Promise<unknown>;
  watched.send = ((command: { constructor: { name: string }; input: Record<string, unknown> }) => {
    sent.push({ name: command.constructor.name, input: command.input });
    return send(command);
  }) as typeof watched.send;
});

/** Stores a payout that reached `state` at `when` (through the repository's own create and save). */
async function store(ref: string, state: BuildableState, when: Date): Promise<Payout> {
  const { payout } = await repo.createAccepted(payoutInState('ACCEPTED', id(ref), when));
  return repo.save(payout, payoutInState(state, id(ref), when));
}

describe('the oldest payout in a state (by-state index)', () => {
  it('is none on an empty table', async () => {
    expect(await repo.oldestInState('NEEDS_REVIEW')).toBeUndefined();
  });

  it('is the oldest of every shard, whichever shard holds it, and payouts of other states do not count', async () => {
    // The newest entries in shard 0, older ones in shards 1 and 2, the oldest in the last shard: a read
    // of one shard, or of the newest entries, would name another payout.
    await store(referenceInShard('new', 0), 'NEEDS_REVIEW', at(40));
    await store(referenceInShard('newer', 0), 'NEEDS_REVIEW', at(45));
    await store(referenceInShard('mid', 1), 'NEEDS_REVIEW', at(20));
    await store(referenceInShard('late', 1), 'NEEDS_REVIEW', at(30));
    await store(referenceInShard('old', 2), 'NEEDS_REVIEW', at(12));
    const oldestRef = referenceInShard('oldest', SHARDS.byState - 1);
    await store(oldestRef, 'NEEDS_REVIEW', at(10));
    await store(referenceInShard('young', SHARDS.byState - 1), 'NEEDS_REVIEW', at(50));
    // Older still, in other states: not awaiting review.
    for (const [i, state] of (['SUCCEEDED', 'FAILED', 'UNKNOWN'] as const).entries()) await store(`other-${i}`, state, at(i));

    expect(await repo.oldestInState('NEEDS_REVIEW')).toEqual({ identity: id(oldestRef), changedAt: at(10) });
    expect((await repo.oldestInState('SUCCEEDED'))?.changedAt).toEqual(at(0));
  });

  it('keeps a payout where it is when a look finds nothing new, and moves on to the next once it is settled', async () => {
    const oldestRef = referenceInShard('oldest', SHARDS.byState - 1);
    const waiting = (await repo.get(id(oldestRef))) as Payout;
    // The watch's look a day later, GetPayout without an answer: a new version, the same last change.
    const looked = await repo.save(waiting, waiting.checked(at(34), { nextCheckAt: at(35) }));
    expect(looked.version).toBeGreaterThan(waiting.version);
    expect((await repo.oldestInState('NEEDS_REVIEW'))?.changedAt).toEqual(at(10));

    // Settled: it leaves NEEDS_REVIEW's shard, and the next oldest (shard 2) is the answer.
    await repo.save(looked, looked.succeeded('COMPLETED', at(36)));
    expect(await repo.oldestInState('NEEDS_REVIEW')).toEqual({ identity: id(referenceInShard('old', 2)), changedAt: at(12) });
  });

  it('reads one key entry per shard, oldest first, from the by-state index: no Scan, no item', async () => {
    sent.length = 0;
    const sweepStore = createPayoutSweepStore(local().names.payoutsTable, watched);
    expect((await sweepStore.oldestInState('NEEDS_REVIEW'))?.changedAt).toEqual(at(12));
    expect(sent).toHaveLength(SHARDS.byState);
    for (const { name, input } of sent) {
      expect(name).toBe('QueryCommand');
      expect(input).toMatchObject({ IndexName: STATE_INDEX.indexName, Limit: 1, ScanIndexForward: true });
      expect(input.Select).toBeUndefined();
    }
    expect(sent.map(({ input }) => (input.ExpressionAttributeValues as Record<string, string>)[':shard']).sort()).toEqual(
      Array.from({ length: SHARDS.byState }, (_, n) => `NEEDS_REVIEW#${n}`),
    );
  });

  it('refuses a state the by-state index does not hold', async () => {
    await expect(repo.oldestInState('SUBMITTED')).rejects.toThrow(/SUBMITTED is not kept in the by-state index/);
  });
});
