import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
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

  it('keeps open payouts in the sparse open index, watched ones under their watch shard, and removes final ones', async () => {
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
    await repo.save(submitted, submitted.succeeded('PAID', at(4)));
    const watched = await rawItem(id('sparse-2'));
    // The same shard number under the watch prefix, with the reversal watch's first check.
    expect(watched?.openShard).toBe(String(open?.openShard).replace('OPEN#', 'WATCH#'));
    expect(watched?.nextCheckAt).toBe(new Date(at(4).getTime() + 24 * 3600_000).toISOString());
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
    // A watched success is due too once its watch check comes: the watch shards are read after the open ones.
    expect(seen).toContain('sparse-2');
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

  it('lists payouts by state', async () => {
    const rejected = (await repo.listByState({ state: 'REJECTED', limit: 100 })).payouts;
    expect(rejected.map((p) => p.record.identity.withdrawal_reference)).toEqual(expect.arrayContaining(['sparse-1', 'hint-1']));
    expect(rejected.every((p) => p.state === 'REJECTED')).toBe(true);
  });
});
