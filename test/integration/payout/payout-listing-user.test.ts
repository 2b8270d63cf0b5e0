import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createPayoutRepository, type PayoutStore } from '@shared/adapters/payout-repository';
import type { PayoutIdentity } from '@shared/domain/identity';
import { Payout, type PayoutState } from '@shared/domain/payout';
import type { PayoutListQuery } from '@shared/ports/payouts';
import { useLocalAws } from '@test/support/local-aws';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';
import { writeLocalState } from '@local/state';

/*
 * `payouts list --user-reference`: the payouts of one KYC user (the KycDecisionChanged runbook). The
 * `by-state` index does not hold user_reference, so it is a filter on what the listing reads: every
 * matching payout exactly once, newest change first, pages filled up to --limit where the reads allow,
 * and cursors that resume exactly, on a client that forces two items per Query page.
 */

const local = useLocalAws({ stage: 'listinguser' });
let repo: PayoutStore;
let smallPages: PayoutStore;
let stateFile: string;
const operations: string[] = [];

const t0 = new Date('2026-04-01T00:00:00.000Z');
const at = (minutes: number): Date => new Date(t0.getTime() + minutes * 60_000);
const id = (ref: string, merchant = 'm-1'): PayoutIdentity => ({ platform_merchant_id: merchant, currency: 'GHS', withdrawal_reference: ref });

function client(queryLimit?: number): DynamoDBDocumentClient {
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: local().endpoints.dynamodb }), { marshallOptions: { removeUndefinedValues: true } });
  doc.middlewareStack.add(
    (next, context) => async (args) => {
      operations.push(String(context.commandName));
      const input = args.input as Record<string, unknown>;
      if (queryLimit !== undefined && context.commandName === 'QueryCommand') input.Limit = queryLimit;
      return next(args);
    },
    { step: 'initialize', name: 'userListingCounter' },
  );
  return doc;
}

/** A payout of `user` (none when undefined) that succeeded at minute `minute`, or left VERIFYING. */
async function payout(ref: string, user: string | undefined, minute: number, state: PayoutState = 'SUCCEEDED', merchant = 'm-1'): Promise<void> {
  const now = at(minute);
  const accepted = Payout.accept({ identity: id(ref, merchant), amount: '10.00', accountMasked: '******7890', accountCode: 'MTN', ...(user ? { userReference: user } : {}) }, now);
  const { payout: created } = await repo.createAccepted(accepted);
  const verifying = await repo.save(created, created.startVerifying(now));
  if (state === 'VERIFYING') return;
  const submitting = await repo.save(verifying, verifying.startSubmitting(now, 'Kwame Mensah'));
  const submitted = await repo.save(submitting, submitting.submitted('PENDING', now));
  await repo.save(submitted, submitted.succeeded('COMPLETED', now));
}

/** Every page of a listing, following its cursor. */
async function allPages(store: PayoutStore, query: Omit<PayoutListQuery, 'cursor'>): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listByState({ ...query, cursor });
    expect(page.payouts.length).toBeLessThanOrEqual(query.limit);
    pages.push(page.payouts.map((p) => p.record.identity.withdrawal_reference));
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 100);
  return pages;
}

/** The references of `user`'s payouts among the 40 seeded successes, newest first. */
const seeded = (user: string): string[] =>
  Array.from({ length: 40 }, (_, n) => 39 - n)
    .filter((n) => userOf(n) === user)
    .map((n) => `S-${String(n).padStart(2, '0')}`);
const userOf = (n: number): string | undefined => (n % 5 === 0 ? 'user-a' : n % 5 === 1 ? 'user-b' : n % 5 === 2 ? undefined : `user-${n}`);

beforeAll(async () => {
  repo = createPayoutRepository(local().names.payoutsTable, client());
  smallPages = createPayoutRepository(local().names.payoutsTable, client(2));
  // 40 successes over 40 minutes, spread over the by-state shards: user-a has every fifth.
  for (let n = 0; n < 40; n += 1) await payout(`S-${String(n).padStart(2, '0')}`, userOf(n), n);
  await payout('S-a-other-merchant', 'user-a', 3.5, 'SUCCEEDED', 'm-2');
  for (let n = 0; n < 5; n += 1) await payout(`V-${n}`, n % 2 === 0 ? 'user-a' : 'user-b', 100 + n, 'VERIFYING');
  stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-listing-user-')), 'state.json');
  const urls = { gateway: '', kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' };
  writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage: 'listinguser', urls, env: local().env }, stateFile);
});

describe('listing payouts of one user_reference', () => {
  it('lists every payout of the user in the state once, newest change first, across pages of two index items', async () => {
    const userA = [...seeded('user-a').slice(0, 7), 'S-a-other-merchant', ...seeded('user-a').slice(7)];
    expect(userA).toHaveLength(9);
    for (const limit of [1, 2, 3, 50]) {
      const pages = await allPages(smallPages, { state: 'SUCCEEDED', limit, userReference: 'user-a' });
      expect(pages.flat(), `limit ${limit}`).toEqual(userA);
      // Pages are filled while the reads allow it: only the last may be short.
      expect(pages.slice(0, -1).every((page) => page.length === limit), `limit ${limit}: ${JSON.stringify(pages)}`).toBe(true);
    }
    expect(operations).not.toContain('ScanCommand');
  });

  it('keeps the other filters and never lists a payout without that user_reference', async () => {
    expect((await allPages(smallPages, { state: 'SUCCEEDED', limit: 2, userReference: 'user-a', merchant: 'm-2' })).flat()).toEqual(['S-a-other-merchant']);
    expect((await allPages(repo, { state: 'SUCCEEDED', limit: 4, userReference: 'user-b', updatedFrom: at(10), updatedTo: at(30) })).flat()).toEqual(['S-26', 'S-21', 'S-16', 'S-11']);
    expect((await allPages(smallPages, { state: 'SUCCEEDED', limit: 5, userReference: 'user-nobody' })).flat()).toEqual([]);
    expect((await allPages(smallPages, { state: 'FAILED', limit: 5, userReference: 'user-a' })).flat()).toEqual([]);
  });

  it('filters the in-flight states the same way', async () => {
    expect(await allPages(repo, { state: 'VERIFYING', limit: 2, userReference: 'user-a' })).toEqual([['V-4', 'V-2'], ['V-0']]);
  });

  it('without the filter, lists as before: every success once, full pages, newest first (across pages too while each shard answers whole pages)', async () => {
    const everyOne = Array.from({ length: 40 }, (_, n) => `S-${String(39 - n).padStart(2, '0')}`);
    everyOne.splice(36, 0, 'S-a-other-merchant');
    for (const store of [repo, smallPages]) {
      const pages = await allPages(store, { state: 'SUCCEEDED', limit: 7 });
      // Each read's entries are all usable, so a shard cut short shows its newer rest on a later page.
      if (store === repo) expect(pages.flat()).toEqual(everyOne);
      else expect([...pages.flat()].sort()).toEqual([...everyOne].sort());
      expect(pages.slice(0, -1).every((page) => page.length === 7)).toBe(true);
    }
  });
});

describe('payrelay payouts list --user-reference', () => {
  const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);

  it('prints the user_reference of each row with --json and pages with --cursor', async () => {
    const first = await cli(['--json', 'payouts', 'list', '--state', 'SUCCEEDED', '--user-reference', 'user-a', '--merchant', 'm-1', '--limit', '3']);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    const page = JSON.parse(first.stdout) as { payouts: Array<Record<string, unknown>>; cursor: string | null };
    expect(page.payouts.map((p) => [p.withdrawal_reference, p.user_reference])).toEqual(seeded('user-a').slice(0, 3).map((ref) => [ref, 'user-a']));
    expect(page.cursor).toEqual(expect.any(String));

    const second = await cli(['payouts', 'list', '--state', 'SUCCEEDED', '--user-reference', 'user-a', '--merchant', 'm-1', '--limit', '3', '--cursor', page.cursor as string]);
    expect(second, second.stderr).toMatchObject({ code: 0 });
    for (const ref of seeded('user-a').slice(3, 6)) expect(second.stdout).toContain(ref);
    expect(second.stdout).toMatch(/3 payout\(s\) in SUCCEEDED of user user-a on this page; next page: --cursor \S+\n$/);

    const all = await cli(['--json', 'payouts', 'list', '--state', 'SUCCEEDED', '--user-reference', 'user-b', '--limit', '1000']);
    expect(JSON.parse(all.stdout)).toEqual({ payouts: seeded('user-b').map((ref) => expect.objectContaining({ withdrawal_reference: ref, user_reference: 'user-b' })), cursor: null });
  });

  it('says when no payout of the user matches, and refuses an empty or overlong reference with exit 3', async () => {
    const none = await cli(['payouts', 'list', '--state', 'SUCCEEDED', '--user-reference', 'user-nobody']);
    expect(none, none.stderr).toMatchObject({ code: 0 });
    expect(none.stdout).toBe('No payouts match --state SUCCEEDED --user-reference user-nobody.\n');
    expect((await cli(['payouts', 'list', '--state', 'SUCCEEDED', '--user-reference', ''])).code).toBe(3);
    expect((await cli(['payouts', 'list', '--state', 'SUCCEEDED', '--user-reference', 'u'.repeat(129)])).code).toBe(3);
  });

  it('says in its help that it is a filter reading the same pages, not an index', async () => {
    const help = await cli(['payouts', 'list', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('A filter, not an index: it reads the same index pages as the listing without it');
  });
});

describe('listing payouts that share a last-change time', () => {
  it('lists each once across pages, whatever order the index keeps them in within a time', async () => {
    // 14 payouts rejected at the same instant: the by-state shards hold ties, and a page of 3 cuts through them.
    const tied = at(500);
    const refs = Array.from({ length: 14 }, (_, n) => `TIE-${String(n).padStart(2, '0')}`);
    for (const ref of refs) {
      await repo.createAccepted(Payout.accept({ identity: id(ref), amount: '1.00', accountMasked: '******7890', accountCode: 'MTN' }, tied).reject('account not found', tied));
    }
    for (const store of [repo, smallPages]) {
      const pages = await allPages(store, { state: 'REJECTED', limit: 3 });
      expect([...pages.flat()].sort()).toEqual(refs);
    }
  });
});
