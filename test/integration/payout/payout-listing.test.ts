import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { toItem } from '@shared/adapters/payout-item-store';
import { createPayoutRepository, type PayoutStore } from '@shared/adapters/payout-repository';
import { InvalidListCursorError } from '@shared/domain/errors';
import type { PayoutListQuery, PayoutRepository } from '@shared/ports/payouts';
import { LEGACY_OPEN_SHARD, SHARDS } from '@shared/config/resources';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { Payout } from '@shared/domain/payout';
import { useLocalAws } from '@test/support/local-aws';

/*
 * Listing, due queries and reference look-ups through the indexes: every page is followed, nothing
 * is scanned. The client here forces DynamoDB to answer two items per page (Limit 2 on every Query
 * and a count of every operation), so a reader that ignored LastEvaluatedKey would miss items.
 */

const local = useLocalAws({ stage: 'listing' });
let repo: PayoutStore;
let smallPages: PayoutRepository;
const operations: string[] = [];
/** How many keys each BatchGetItem asked for, and whether it read whole items. */
const batchGets: Array<{ keys: number; whole: boolean }> = [];

const t0 = new Date('2026-02-01T00:00:00.000Z');
const at = (minutes: number): Date => new Date(t0.getTime() + minutes * 60_000);
const id = (ref: string, currency = 'GHS', merchant = 'm-1'): PayoutIdentity => ({ platform_merchant_id: merchant, currency, withdrawal_reference: ref });
const accept = (identity: PayoutIdentity, now: Date): Payout =>
  Payout.accept({ identity, amount: '10.00', accountMasked: '******7890', accountCode: 'MTN' }, now);

function client(options: { queryLimit?: number } = {}): DynamoDBDocumentClient {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      operations.push(String(context.commandName));
      const input = args.input as Record<string, unknown>;
      if (context.commandName === 'BatchGetCommand' || context.commandName === 'BatchGetItemCommand') {
        for (const request of Object.values(input.RequestItems as Record<string, { Keys: unknown[]; ProjectionExpression?: string }>)) {
          batchGets.push({ keys: request.Keys.length, whole: request.ProjectionExpression === undefined });
        }
      }
      if (options.queryLimit !== undefined && context.commandName === 'QueryCommand' && input.Limit === undefined) input.Limit = options.queryLimit;
      return next(args);
    },
    { step: 'initialize', name: 'listingTestCounter' },
  );
  return doc;
}

/** Creates a payout and moves it to REJECTED (listed in `by-state`) at minute `minute`. */
async function rejected(identity: PayoutIdentity, minute: number): Promise<Payout> {
  const { payout } = await repo.createAccepted(accept(identity, at(minute)));
  return repo.save(payout, payout.reject('account not found', at(minute)));
}

/** Every page of a listing, in order. */
async function allPages(query: Omit<PayoutListQuery, 'cursor'>): Promise<Payout[][]> {
  const pages: Payout[][] = [];
  let cursor: string | undefined;
  do {
    const page = await repo.listByState({ ...query, cursor });
    pages.push([...page.payouts]);
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (cursor: string): unknown => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));

const refs = (payouts: readonly Payout[]): string[] => payouts.map((p) => p.record.identity.withdrawal_reference);

beforeAll(() => {
  repo = createPayoutRepository(local().names.payoutsTable, client());
  smallPages = createPayoutRepository(local().names.payoutsTable, client({ queryLimit: 2 }));
});

describe('listing payouts by state (index-backed, paginated)', () => {
  it('pages through a final state newest change first, each payout exactly once, without a Scan', async () => {
    for (let i = 0; i < 23; i += 1) await rejected(id(`rej-${String(i).padStart(2, '0')}`), i);
    operations.length = 0;
    const pages = await allPages({ state: 'REJECTED', limit: 5 });
    const listed = pages.flat();
    expect(pages.slice(0, -1).every((p) => p.length === 5)).toBe(true);
    expect(refs(listed)).toEqual(Array.from({ length: 23 }, (_, i) => `rej-${String(22 - i).padStart(2, '0')}`));
    expect(operations).not.toContain('ScanCommand');
  });

  it('filters by merchant and by the time of the last change', async () => {
    await rejected(id('other-merchant', 'GHS', 'm-2'), 5);
    const m2 = (await repo.listByState({ state: 'REJECTED', limit: 50, merchant: 'm-2' })).payouts;
    expect(refs(m2)).toEqual(['other-merchant']);
    const window = (await repo.listByState({ state: 'REJECTED', limit: 50, merchant: 'm-1', updatedFrom: at(10), updatedTo: at(12) })).payouts;
    expect(refs(window)).toEqual(['rej-12', 'rej-11', 'rej-10']);
    // A range that ends before it starts holds nothing (DynamoDB would refuse its BETWEEN).
    expect((await repo.listByState({ state: 'REJECTED', limit: 50, updatedFrom: at(12), updatedTo: at(10) })).payouts).toEqual([]);
    expect(await repo.stateChangeTimes('REJECTED', at(12), at(10))).toEqual([]);
  });

  it('lists the in-flight states from the open partitions of the open index, paginated the same way, reading only the payouts in flight', async () => {
    for (let i = 0; i < 7; i += 1) {
      const { payout } = await repo.createAccepted(accept(id(`verifying-${i}`), at(100 + i)));
      await repo.save(payout, payout.startVerifying(at(100 + i)));
    }
    await repo.createAccepted(accept(id('still-accepted'), at(99)));
    // Successes under their reversal watch: in the reconciler's index, under its watch partitions, not in flight.
    for (let i = 0; i < 12; i += 1) {
      const record = { ...accept(id(`watched-${i}`), at(90)).record, state: 'SUCCEEDED' as const, nextCheckAt: '2027-01-01T00:00:00.000Z' };
      await client().send(new PutCommand({ TableName: local().names.payoutsTable, Item: toItem(Payout.fromRecord(record)) }));
    }
    operations.length = 0;
    batchGets.length = 0;
    const pages = await allPages({ state: 'VERIFYING', limit: 3 });
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(refs(pages.flat())).toEqual(['verifying-6', 'verifying-5', 'verifying-4', 'verifying-3', 'verifying-2', 'verifying-1', 'verifying-0']);
    expect(operations).not.toContain('ScanCommand');
    // Per page: the state and time of the 8 payouts in flight (never the watched successes), then the page's whole items.
    expect(batchGets).toEqual([
      { keys: 8, whole: false },
      { keys: 3, whole: true },
      { keys: 8, whole: false },
      { keys: 3, whole: true },
      { keys: 8, whole: false },
      { keys: 1, whole: true },
    ]);
  });

  it('refuses a cursor it did not hand out, with a named error', async () => {
    await expect(repo.listByState({ state: 'REJECTED', limit: 5, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidListCursorError);
    const forged = Buffer.from(JSON.stringify({ state: 'SUCCEEDED', shards: [1] })).toString('base64url');
    await expect(repo.listByState({ state: 'SUCCEEDED', limit: 5, cursor: forged })).rejects.toBeInstanceOf(InvalidListCursorError);
  });

  it('refuses every forged or stale by-state cursor before DynamoDB sees it (no ValidationException, no Query sent)', async () => {
    // A cursor the listing handed out, whose shards each resume after a key of their own.
    const handedOut = await repo.listByState({ state: 'REJECTED', limit: 2 });
    const decoded = decode(handedOut.cursor as string) as { state: string; shards: Array<Record<string, string> | 0 | null> };
    expect(decoded.state).toBe('REJECTED');
    const n = decoded.shards.findIndex((at) => typeof at === 'object' && at !== null);
    const key = decoded.shards[n] as Record<string, string>;
    expect(Object.keys(key).sort()).toEqual(['listShard', 'pk', 'updatedAt']);
    const withShard = (entry: unknown): string => encode({ ...decoded, shards: decoded.shards.map((at, i) => (i === n ? entry : at)) });
    const other = (n + 1) % decoded.shards.length;
    const forgeries: Record<string, string> = {
      'the review repro (a string for a shard)': encode({ state: 'REJECTED', shards: ['x', 0, 0, 0] }),
      'too few shards': encode({ ...decoded, shards: decoded.shards.slice(1) }),
      'too many shards': encode({ ...decoded, shards: [...decoded.shards, 0] }),
      'no state': encode({ shards: decoded.shards }),
      'a state that is none': encode({ ...decoded, state: 'rejected' }),
      'another shard\'s key': withShard({ ...key, listShard: `REJECTED#${other}` }),
      "another state's key": withShard({ ...key, listShard: `SUCCEEDED#${n}` }),
      'an extra attribute': withShard({ ...key, state: 'REJECTED' }),
      'a missing attribute': withShard({ pk: key.pk, listShard: key.listShard }),
      'a number for a time': withShard({ ...key, updatedAt: 5 }),
      'a number for the key': withShard({ ...key, pk: 7 }),
      'an empty key': withShard({ ...key, pk: '' }),
      'an array for a key': withShard([key.pk, key.listShard, key.updatedAt]),
      'an extra top-level member': encode({ ...decoded, more: 1 }),
    };
    for (const [what, cursor] of Object.entries(forgeries)) {
      operations.length = 0;
      await expect(repo.listByState({ state: 'REJECTED', limit: 2, cursor }), what).rejects.toBeInstanceOf(InvalidListCursorError);
      expect(operations, what).toEqual([]);
    }
    // A key outside the range listed would fail DynamoDB's range predicate: refused as stale, said to be of another range.
    await expect(repo.listByState({ state: 'REJECTED', limit: 2, updatedFrom: at(0), updatedTo: at(1), cursor: handedOut.cursor })).rejects.toEqual(
      new InvalidListCursorError({ kind: 'range' }),
    );
    // The review page's listing: another state's cursor is not one of its own, and is said to be that state's.
    await expect(repo.listByState({ state: 'NEEDS_REVIEW', limit: 2, cursor: handedOut.cursor })).rejects.toMatchObject({
      name: 'InvalidListCursorError',
      foreign: { kind: 'state', cursorState: 'REJECTED', listedState: 'NEEDS_REVIEW' },
      message: 'the cursor belongs to the listing of REJECTED payouts, not of NEEDS_REVIEW ones; start again without it',
    });
    // The cursor handed out still reads on.
    expect((await repo.listByState({ state: 'REJECTED', limit: 2, cursor: handedOut.cursor })).payouts).toHaveLength(2);
  });

  it('refuses a forged in-flight cursor (strings after, nothing else)', async () => {
    const handedOut = await repo.listByState({ state: 'VERIFYING', limit: 2 });
    expect((await repo.listByState({ state: 'VERIFYING', limit: 2, cursor: handedOut.cursor })).payouts).toHaveLength(2);
    const [time, pk] = (decode(handedOut.cursor as string) as { after: [string, string] }).after;
    for (const forged of [{ after: [time, pk] }, ...[{ after: [1, 2] }, { after: [time] }, { after: [time, pk, 'x'] }, { after: [time, ''] }, { after: [time, pk], more: 1 }, { after: 'x' }].map((f) => ({ state: 'VERIFYING', ...f }))]) {
      await expect(repo.listByState({ state: 'VERIFYING', limit: 2, cursor: encode(forged) }), JSON.stringify(forged)).rejects.toBeInstanceOf(InvalidListCursorError);
    }
  });
});

describe('a cursor of another listing (the review: --state FAILED given a --state SUCCEEDED cursor)', () => {
  it('is refused as the cursor of the state it was handed out for, by-state and in-flight alike, before anything is read', async () => {
    const byState = (await repo.listByState({ state: 'REJECTED', limit: 2 })).cursor as string;
    const inFlight = (await repo.listByState({ state: 'VERIFYING', limit: 2 })).cursor as string;
    for (const [cursor, cursorState, listedState] of [
      [byState, 'REJECTED', 'FAILED'],
      [byState, 'REJECTED', 'ACCEPTED'],
      [inFlight, 'VERIFYING', 'SUBMITTING'],
      [inFlight, 'VERIFYING', 'REJECTED'],
    ] as const) {
      operations.length = 0;
      await expect(repo.listByState({ state: listedState, limit: 2, cursor }), `${cursorState} cursor in ${listedState}`).rejects.toEqual(
        new InvalidListCursorError({ kind: 'state', cursorState, listedState }),
      );
      expect(operations).toEqual([]);
    }
  });

  it('is refused even when it holds no key of its state (its shards all at their start or done), which a listing of another state used to read on from', async () => {
    const noKey = encode({ state: 'REJECTED', shards: Array.from({ length: SHARDS.byState }, (_, n) => (n === 0 ? 0 : null)) });
    expect((await repo.listByState({ state: 'REJECTED', limit: 2, cursor: noKey })).payouts.length).toBeGreaterThan(0);
    await expect(repo.listByState({ state: 'SUCCEEDED', limit: 2, cursor: noKey })).rejects.toEqual(
      new InvalidListCursorError({ kind: 'state', cursorState: 'REJECTED', listedState: 'SUCCEEDED' }),
    );
  });
});

describe('queries follow LastEvaluatedKey (two items per page)', () => {
  it('marks every open payout of a reference due and finds every payout of it', async () => {
    for (const currency of ['GHS', 'NGN', 'KES', 'UGX', 'XOF']) await repo.createAccepted(accept(id('shared-ref', currency), t0));
    expect(await smallPages.markDueNow('shared-ref', at(-5))).toBe(5);
    expect((await smallPages.findByReference('shared-ref')).map((p) => p.record.identity.currency).sort()).toEqual(['GHS', 'KES', 'NGN', 'UGX', 'XOF']);
  });

  it('reads every due payout across the open shards, including items written before sharding', async () => {
    // An item as an older version stored it, under the single legacy key.
    const legacy = accept(id('legacy-open'), t0);
    await client().send(
      new PutCommand({
        TableName: local().names.payoutsTable,
        Item: {
          pk: payoutKey(legacy.record.identity),
          platform_merchant_id: 'm-1',
          currency: 'GHS',
          withdrawal_reference: 'legacy-open',
          state: 'ACCEPTED',
          version: 1,
          amount: '10.00',
          account_masked: '******7890',
          account_code: 'MTN',
          submit_attempts: 0,
          checks: 0,
          history: legacy.record.history,
          createdAt: legacy.record.createdAt,
          updatedAt: legacy.record.updatedAt,
          openShard: LEGACY_OPEN_SHARD,
          nextCheckAt: t0.toISOString(),
        },
      }),
    );
    const due: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await smallPages.queryDue(at(100_000), 3, cursor);
      due.push(...page.identities.map((i) => i.withdrawal_reference));
      cursor = page.cursor;
      pages += 1;
    } while (cursor !== undefined && pages < 200);
    const open = ['legacy-open', 'still-accepted', ...Array.from({ length: 7 }, (_, i) => `verifying-${i}`)];
    expect(due.filter((r) => r !== 'shared-ref').sort()).toEqual(open.sort());
    expect(due.filter((r) => r === 'shared-ref')).toHaveLength(5);
    expect(new Set(due.map((r, i) => `${r}#${i}`)).size).toBe(due.length);
  });

  it('refuses a sweep cursor whose key is not its own partition\'s', async () => {
    const first = await smallPages.queryDue(at(100_000), 1);
    const { s, k } = decode(first.cursor as string) as { s: number; k: Record<string, string> };
    expect(Object.keys(k).sort()).toEqual(['nextCheckAt', 'openShard', 'pk']);
    expect((await smallPages.queryDue(at(100_000), 1, first.cursor)).identities).toHaveLength(1);
    for (const forged of [
      { s: s + 1, k },
      { s, k: { ...k, extra: 'x' } },
      { s, k: { ...k, nextCheckAt: 1 } },
      { s, k: { pk: k.pk, openShard: k.openShard } },
      { s: 99 },
      { s, k, more: 1 },
    ]) {
      await expect(smallPages.queryDue(at(100_000), 1, encode(forged)), JSON.stringify(forged)).rejects.toBeInstanceOf(InvalidListCursorError);
    }
  });
});
