import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { payoutItemWriter } from '@shared/adapters/dynamodb-client';
import { toItem } from '@shared/adapters/payout-item-store';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { ConcurrentModificationError } from '@shared/domain/errors';
import type { PayoutRepository } from '@shared/ports/payouts';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { Payout } from '@shared/domain/payout';
import { useLocalAws } from '@test/support/local-aws';

const local = useLocalAws({ stage: 'repo' });
let repo: PayoutRepository;
let doc: DynamoDBDocumentClient;

const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (minutes: number): Date => new Date(t0.getTime() + minutes * 60_000);
const id = (ref: string, currency = 'GHS'): PayoutIdentity => ({ platform_merchant_id: 'm-1', currency, withdrawal_reference: ref });
const fresh = (ref: string, now = t0): Payout =>
  Payout.accept({ identity: id(ref), amount: '10.00', accountMasked: '******7890', accountCode: 'MTN', metadata: { batch: 'b1' } }, now);

beforeAll(() => {
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  repo = createPayoutRepository(local().names.payoutsTable, doc);
});

async function rawItem(identity: PayoutIdentity): Promise<Record<string, unknown> | undefined> {
  const out = await doc.send(new GetCommand({ TableName: local().names.payoutsTable, Key: { pk: payoutKey(identity) } }));
  return out.Item;
}

describe('payout repository on dynalite', () => {
  it('creates a payout once; a second create returns the stored one unchanged', async () => {
    const first = await repo.createAccepted(fresh('create-1'));
    expect(first.created).toBe(true);
    const moved = await repo.save(first.payout, first.payout.startVerifying(at(1)));
    const second = await repo.createAccepted(fresh('create-1', at(2)));
    expect(second.created).toBe(false);
    expect(second.payout.state).toBe('VERIFYING');
    expect(second.payout.version).toBe(moved.version);
    expect(second.payout.record).toEqual(moved.record);
  });

  it('writes only on the expected state and version (rule 4)', async () => {
    const { payout } = await repo.createAccepted(fresh('cond-1'));
    const verifying = await repo.save(payout, payout.startVerifying(at(1)));
    // A stale writer that still holds version 1 cannot move it, not even forward.
    await expect(repo.save(payout, payout.reject('stale', at(2)))).rejects.toBeInstanceOf(ConcurrentModificationError);
    const stored = await repo.get(id('cond-1'));
    expect(stored?.state).toBe('VERIFYING');
    expect(stored?.version).toBe(verifying.version);
    expect(stored?.record.history.map((h) => h.to)).toEqual(['ACCEPTED', 'VERIFYING']);
  });

  it("takes its own write whose answer was lost, refused on the SDK's retry, for a write that held; another writer's stays a conflict", async () => {
    // A client that sends each PutItem twice, as the SDK's retry does when the first answer is lost
    // after the write landed: the second attempt's condition fails on the first one's result.
    const lossy = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }));
    const send = lossy.send.bind(lossy) as (command: unknown) => Promise<unknown>;
    lossy.send = (async (command: unknown) => {
      if (command instanceof PutItemCommand) await send(command);
      return send(command);
    }) as typeof lossy.send;
    const store = createPayoutRepository(local().names.payoutsTable, lossy);

    const created = await store.createAccepted(fresh('lost-answer-1'));
    expect(created.created).toBe(true);
    const verifying = await store.save(created.payout, created.payout.startVerifying(at(1)));
    expect((await repo.get(id('lost-answer-1')))?.version).toBe(verifying.version);
    // Someone else's create, and a stale save, are still refused through the same client.
    expect((await store.createAccepted(fresh('lost-answer-1', at(2)))).created).toBe(false);
    await expect(store.save(created.payout, created.payout.reject('stale', at(3)))).rejects.toBeInstanceOf(ConcurrentModificationError);
    expect((await repo.get(id('lost-answer-1')))?.state).toBe('VERIFYING');
  });

  it('lets exactly one of two racing intent writes win (rule 1)', async () => {
    const { payout } = await repo.createAccepted(fresh('race-1'));
    const verifying = await repo.save(payout, payout.startVerifying(at(1)));
    const results = await Promise.allSettled([
      repo.save(verifying, verifying.startSubmitting(at(2), 'A')),
      repo.save(verifying, verifying.startSubmitting(at(2), 'B')),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof ConcurrentModificationError)).toHaveLength(1);
    expect((await repo.get(id('race-1')))?.record.submitAttempts).toBe(1);
  });

  it('stores only the masked account number and keeps history on the item', async () => {
    await repo.createAccepted(fresh('mask-1'));
    const item = await rawItem(id('mask-1'));
    expect(item?.account_masked).toBe('******7890');
    expect(JSON.stringify(item)).not.toMatch(/\d{5,}/);
    expect(item?.history).toHaveLength(1);
    expect(item?.metadata).toEqual({ batch: 'b1' });
  });

  it('keeps open payouts in the sparse open index, NEEDS_REVIEW under its watch shard, and removes final ones (SUCCEEDED too)', async () => {
    const { payout } = await repo.createAccepted(fresh('sparse-1'));
    const shard = (await rawItem(id('sparse-1')))?.openShard;
    expect(shard).toMatch(/^OPEN#\d$/);
    await repo.save(payout, payout.reject('test', at(1)));
    const item = await rawItem(id('sparse-1'));
    expect(item?.openShard).toBeUndefined();
    expect(item?.nextCheckAt).toBeUndefined();
    expect(item?.state).toBe('REJECTED');

    const created = (await repo.createAccepted(fresh('sparse-2'))).payout;
    const verifying = await repo.save(created, created.startVerifying(at(1)));
    const submitting = await repo.save(verifying, verifying.startSubmitting(at(2), 'A'));
    const submitted = await repo.save(submitting, submitting.submitted('PENDING', at(3)));
    const open = await rawItem(id('sparse-2'));
    const review = await repo.save(submitted, submitted.needsReview('still PENDING', at(4)));
    const watched = await rawItem(id('sparse-2'));
    // The same shard number under the watch prefix, with the review watch's first look.
    expect(watched?.openShard).toBe(String(open?.openShard).replace('OPEN#', 'WATCH#'));
    expect(watched?.nextCheckAt).toBe(new Date(at(4).getTime() + 3600_000).toISOString());
    // Settled, it leaves the open index (one index delete): the reversal watch reads by-state by age.
    await repo.save(review, review.succeeded('PAID', at(5)));
    const settled = await rawItem(id('sparse-2'));
    expect(settled?.openShard).toBeUndefined();
    expect(settled?.nextCheckAt).toBeUndefined();
    expect(settled?.listShard).toMatch(/^SUCCEEDED#\d$/);
    // One left in review, for the due query below.
    const third = (await repo.createAccepted(fresh('sparse-3'))).payout;
    await repo.save(third, third.startVerifying(at(1)).startSubmitting(at(2), 'A').submitted('PENDING', at(3)).needsReview('still PENDING', at(4)));
  });

  it('lists the keys of payouts in a state changed in [from, to), paginated across the by-state shards', async () => {
    const base = new Date('2031-01-01T00:00:00.000Z');
    const minute = (n: number): Date => new Date(base.getTime() + n * 60_000);
    const refs = ['changed-0', 'changed-1', 'changed-2', 'changed-3', 'changed-4', 'changed-5'];
    for (const [i, ref] of refs.entries()) {
      const { payout } = await repo.createAccepted(fresh(ref, minute(i)));
      const submitted = payout.startVerifying(minute(i)).startSubmitting(minute(i), 'A').submitted('PENDING', minute(i));
      await repo.save(payout, submitted.succeeded('PAID', minute(i)));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      // From minute 1 (included) to minute 5 (left out).
      const page = await repo.queryChanged('SUCCEEDED', minute(1), minute(5), 1, cursor);
      seen.push(...page.identities.map((i) => i.withdrawal_reference));
      cursor = page.cursor;
      pages += 1;
    } while (cursor);
    expect(seen.sort()).toEqual(['changed-1', 'changed-2', 'changed-3', 'changed-4']);
    expect(pages).toBeGreaterThanOrEqual(4);
    await expect(repo.queryChanged('SUBMITTED', minute(0), minute(5), 10)).rejects.toThrow(/SUBMITTED is not kept in the by-state index/);
  });

  it("stores the reversal watch's progress conditionally: a save from a stale read is refused", async () => {
    expect(await repo.reversalWatchProgress()).toBeUndefined();
    const start = { coveredUntil: at(0) };
    expect(await repo.saveReversalWatchProgress(undefined, start)).toBe(true);
    // A second first run lost the race.
    expect(await repo.saveReversalWatchProgress(undefined, { coveredUntil: at(1) })).toBe(false);
    const first = await repo.reversalWatchProgress();
    expect(first).toEqual({ coveredUntil: at(0), version: 1 });
    const stopped = { coveredUntil: at(0), pending: { until: at(10), ageMs: 2 * 86_400_000, cursor: 'abc' } };
    expect(await repo.saveReversalWatchProgress(first, stopped)).toBe(true);
    expect(await repo.saveReversalWatchProgress(first, { coveredUntil: at(10) })).toBe(false);
    expect(await repo.reversalWatchProgress()).toEqual({ ...stopped, version: 2 });
    // The watermark is no payout: no listing or index sees it.
    expect(await repo.findByReference('reconciler#reversal-watch')).toEqual([]);
  });

  it('queries due payouts oldest first, paginated, reading only due open ones', async () => {
    const base = new Date('2030-01-01T00:00:00.000Z');
    // Use a far-future clock so payouts created by the other tests (due at 2026) count too.
    const refs = ['due-a', 'due-b', 'due-c', 'due-d'];
    for (const [i, ref] of refs.entries()) await repo.createAccepted(fresh(ref, new Date(base.getTime() + i * 60_000)));
    await repo.createAccepted(fresh('not-yet', new Date(base.getTime() + 3600_000)));
    const now = new Date(base.getTime() + 10 * 60_000);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await repo.queryDue(now, 2, cursor);
      seen.push(...page.identities.map((i) => i.withdrawal_reference));
      expect(page.scannedCount).toBe(page.identities.length);
      cursor = page.cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBeGreaterThan(2);
    // Oldest first within each write shard; the shards are read one after another.
    expect(seen.filter((r) => refs.includes(r)).sort()).toEqual(refs);
    expect(seen).not.toContain('not-yet');
    expect(seen).not.toContain('sparse-1');
    // A payout under review is due too once its watch look comes: the watch shards are read after the open ones.
    expect(seen).toContain('sparse-3');
    // A success is not: its reversal watch reads by-state by age.
    expect(seen).not.toContain('sparse-2');
  });

  it('marks open payouts of a reference due now, leaving final ones alone', async () => {
    const open = await repo.createAccepted(fresh('hint-1'));
    const other = Payout.accept({ identity: id('hint-1', 'NGN'), amount: '5.00', accountMasked: '', accountCode: '057' }, t0);
    const closed = await repo.createAccepted(other);
    await repo.save(closed.payout, closed.payout.reject('done', at(1)));
    const now = at(-60);
    expect(await repo.markDueNow('hint-1', now)).toBe(1);
    expect((await repo.get(id('hint-1')))?.record.nextCheckAt).toBe(now.toISOString());
    expect((await repo.get(id('hint-1')))?.version).toBe(open.payout.version);
    expect(await repo.markDueNow('no-such-reference', now)).toBe(0);
  });

  it('keeps the quarantine nudge\'s throttle through later writes of the payout', async () => {
    const { payout } = await repo.createAccepted(fresh('nudge-1'));
    const every = 15 * 60_000;
    expect(await repo.markDueNow('nudge-1', at(1), { atMostEveryMs: every })).toBe(1);
    const stored = (await repo.get(id('nudge-1'))) as Payout;
    expect(stored.record.mismatchNudgedAt).toBe(at(1).toISOString());
    // The worker (or a reconciler look) writes a new version meanwhile.
    await repo.save(stored, stored.startVerifying(at(2)));
    expect(payout.version).toBeLessThan(((await repo.get(id('nudge-1'))) as Payout).version);
    expect(await repo.markDueNow('nudge-1', at(5), { atMostEveryMs: every })).toBe(0);
    expect(await repo.markDueNow('nudge-1', at(17), { atMostEveryMs: every })).toBe(1);
  });

  it('lists payouts by state', async () => {
    const rejected = (await repo.listByState({ state: 'REJECTED', limit: 100 })).payouts;
    expect(rejected.map((p) => p.record.identity.withdrawal_reference)).toEqual(expect.arrayContaining(['sparse-1', 'hint-1']));
    expect(rejected.every((p) => p.state === 'REJECTED')).toBe(true);
  });

  it('without a client of its own, writes every payout version through the item writer, on the same conditions', async () => {
    // The writer resolves its middleware at its first PutItem: instrument it before any write.
    const writer = payoutItemWriter();
    const sent: string[] = [];
    writer.middlewareStack.add(
      (next, context) => async (args) => {
        sent.push(`${String(context.commandName)} ${String((args.input as { ConditionExpression?: string }).ConditionExpression)}`);
        return next(args);
      },
      { step: 'initialize', name: 'repositoryTestWrites' },
    );
    const own = createPayoutRepository(local().names.payoutsTable);
    const { payout } = await own.createAccepted(fresh('writer-1'));
    const verifying = await own.save(payout, payout.startVerifying(at(1)));
    await expect(own.save(payout, payout.reject('stale', at(2)))).rejects.toBeInstanceOf(ConcurrentModificationError);
    expect((await own.createAccepted(fresh('writer-1', at(3)))).created).toBe(false);
    expect(sent).toEqual([
      'PutItemCommand attribute_not_exists(pk)',
      'PutItemCommand #state = :state AND #version = :version',
      'PutItemCommand #state = :state AND #version = :version',
      'PutItemCommand attribute_not_exists(pk)',
    ]);
    // Stored as the document client writes it: the same item, undefined attributes left out, with
    // the id of the write that stored it.
    expect(await rawItem(id('writer-1'))).toEqual({ ...toItem(verifying), writeId: expect.stringMatching(/^[\w-]{11}$/) });
    expect(await rawItem(id('writer-1'))).not.toHaveProperty('expected_name');
  });
});
