import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SHARDS } from '@shared/config/resources';
import { parsePayoutKey } from '@shared/domain/identity';
import { PAYOUT_STATES, type Payout, type PayoutState } from '@shared/domain/payout';
import { InvalidListCursorError } from '@shared/domain/errors';
import { decodeCursorValue, encodeCursor, isPartitionKey } from './list-cursor';
import type { PayoutListPage, PayoutListQuery, PayoutRepository } from '@shared/ports/payouts';
import { documentClient } from './dynamodb-client';
import { fromItem, LISTED_STATES, type PayoutItem } from './payout-item-store';
import { createPayoutSweepStore, IN_FLIGHT_KEYS, OPEN_INDEX, STATE_INDEX, type Key } from './payout-sweep-store';
import { createPayoutNudge, payoutKeysByReference } from './payout-nudge';
import { queryAll } from './query-all';

/** BatchGetItem calls of one getMany in flight at once. */
const GET_MANY_PARALLEL = 4;

/**
 * Reads of the by-state shards one page may take to fill itself (each reads at most `limit` entries a
 * shard): a filter drops entries after they are read, so a rare match could otherwise cost a page of
 * nothing. The page is returned with its cursor after that many, however short.
 */
const FILTERED_READS = 10;

/**
 * The by-state cursor: the state listed, and per shard where to resume (a key), 0 to read it from its
 * start, or null once the shard is exhausted.
 */
interface StateCursor {
  state: PayoutState;
  shards: Array<Key | null | 0>;
}

/** Whether an object has exactly these members. */
const hasMembers = (v: unknown, names: readonly string[]): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).sort().join(',') === [...names].sort().join(',');

/**
 * A by-state cursor of this query: its state, and exactly one entry per shard, each 0, null or the
 * key its own shard's Query stopped at (`pk`, `listShard` naming that shard of the state listed,
 * `updatedAt` in the range listed, when one is given), so a forged or stale cursor is refused before
 * DynamoDB sees it.
 */
const stateCursorOf =
  (state: PayoutState, range?: { from: string; to: string }) =>
  (v: unknown): v is StateCursor => {
    if (!hasMembers(v, ['state', 'shards']) || v.state !== state) return false;
    const shards = v.shards;
    return (
      Array.isArray(shards) &&
      shards.length === SHARDS.byState &&
      shards.every(
        (at, n) =>
          at === 0 ||
          at === null ||
          isPartitionKey(at, { tableKey: 'pk', partitionKey: STATE_INDEX.partitionKey.name, partition: `${state}#${n}`, sortKey: STATE_INDEX.sortKey.name, range }),
      )
    );
  };

/** The open-state cursor: the state listed, and the last (updatedAt, pk) shown; the next page starts after it. */
interface OpenStateCursor {
  state: PayoutState;
  after: [string, string];
}
const openStateCursorOf =
  (state: PayoutState) =>
  (v: unknown): v is OpenStateCursor => {
    if (!hasMembers(v, ['state', 'after']) || v.state !== state) return false;
    const after = v.after;
    return Array.isArray(after) && after.length === 2 && after.every((part) => typeof part === 'string' && part !== '');
  };

/**
 * Reads a cursor of a payout listing. Every cursor names the state it lists, so one handed out by a
 * listing of another state is refused, and said to be (`InvalidListCursorError` with `foreign`):
 * without it, a cursor whose shards hold no key, or an in-flight one, would read the other state's
 * payouts from a position of its own. A by-state cursor of this state whose keys fall outside the
 * range listed is said to be of another range.
 * @throws InvalidListCursorError
 */
function readListCursor<T>(cursor: string, state: PayoutState, valid: (v: unknown) => v is T, validInAnyRange = valid): T {
  const value = decodeCursorValue(cursor);
  const named = typeof value === 'object' && value !== null ? (value as { state?: unknown }).state : undefined;
  if (typeof named === 'string' && named !== state && (PAYOUT_STATES as readonly string[]).includes(named)) {
    throw new InvalidListCursorError({ kind: 'state', cursorState: named, listedState: state });
  }
  if (valid(value)) return value;
  throw new InvalidListCursorError(validInAnyRange(value) ? { kind: 'range' } : undefined);
}

/** The key condition on `updatedAt` for an optional date range (inclusive at both ends). */
function updatedRange(query: PayoutListQuery): { condition: string; values: Record<string, string>; from: string; to: string } {
  // Every ISO timestamp sorts after '0' and before '~' (a key condition may not hold an empty string).
  const from = query.updatedFrom?.toISOString() ?? '0';
  const to = query.updatedTo?.toISOString() ?? '~';
  return { condition: '#updated BETWEEN :from AND :to', values: { ':from': from, ':to': to }, from, to };
}

/** Whether an inclusive range ends before it starts. */
const isEmptyRange = (from?: Date, to?: Date): boolean => from !== undefined && to !== undefined && to < from;

/** Newest change first; the key breaks ties so pages never overlap. */
const newestFirst = (a: { updatedAt: string; pk: string }, b: { updatedAt: string; pk: string }): number =>
  b.updatedAt.localeCompare(a.updatedAt) || a.pk.localeCompare(b.pk);

/** The repository plus the index-only read the ops console's counts and charts use. */
export interface PayoutStore extends PayoutRepository {
  /**
   * The last-change times of the payouts in a listed state (UNKNOWN or final) changed in the range,
   * read from the `by-state` index alone (keys and times, never the items): enough to count and to
   * bucket by hour, at a fraction of a listing's reads.
   */
  stateChangeTimes(state: PayoutState, updatedFrom?: Date, updatedTo?: Date): Promise<string[]>;
}

/**
 * The payouts table through the DynamoDB document client: the sweep store of payout-sweep-store.ts
 * (itself over the item store of payout-item-store.ts: reads by identity, one conditional
 * single-item write per change, no transactions) plus the listings and the lookups by reference,
 * each from an index (never a Scan). A given client carries every call, writes included, so
 * whatever watches it (a test's counter) sees them all.
 */
export function createPayoutRepository(tableName: string, given?: DynamoDBDocumentClient): PayoutStore {
  const client = given ?? documentClient();
  const sweep = createPayoutSweepStore(tableName, given);
  const nudge = createPayoutNudge(tableName, client);

  /**
   * Items for keys, in chunks of 100 (BatchGetItem's limit), up to GET_MANY_PARALLEL chunks in flight,
   * retrying what comes back unprocessed; with `fields`, only those attributes (a listing's filter
   * reads a few bytes per item instead of whole histories).
   */
  async function getMany(pks: readonly string[], fields?: readonly string[]): Promise<PayoutItem[]> {
    const projection = fields
      ? { ProjectionExpression: fields.map((_, n) => `#f${n}`).join(', '), ExpressionAttributeNames: Object.fromEntries(fields.map((f, n) => [`#f${n}`, f])) }
      : {};
    const found: PayoutItem[] = [];
    let next = 0;
    const reader = async (): Promise<void> => {
      while (next < pks.length) {
        let keys: Key[] | undefined = pks.slice(next, next + 100).map((pk) => ({ pk }));
        next += 100;
        while (keys && keys.length > 0) {
          const out = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys, ...projection } } }));
          found.push(...((out.Responses?.[tableName] ?? []) as PayoutItem[]));
          keys = out.UnprocessedKeys?.[tableName]?.Keys as Key[] | undefined;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(GET_MANY_PARALLEL, Math.ceil(pks.length / 100)) }, reader));
    return found;
  }

  /**
   * One read of each shard of `by-state` not yet exhausted, from `shards`, merged newest first: at
   * most `wanted` payouts of the query, and where each shard resumes after what this read used.
   * Every entry read may be used, so each read makes progress, and what it uses of each shard is a
   * prefix of that shard's answer, so no payout is skipped or shown twice across pages. A shard whose
   * Query stopped early (a merchant filter dropped most of its page) may hold entries newer than the
   * last ones shown, which a later page shows: pages are newest first within themselves. Entries are
   * used newest first until `wanted`
   * payouts are found; an entry whose payout moved on since the index answered, or that names
   * another user_reference, is used and left out (it shows under its new state, or not at all).
   * With a user_reference filter (the index does not hold it) the used entries' state and
   * user_reference are read first (few bytes, though billed on the whole item), then the whole items of the payouts shown;
   * without one, the whole items of the first `wanted` entries, as the listing always did.
   */
  async function stateIndexRead(query: PayoutListQuery, shards: ReadonlyArray<Key | null | 0>, wanted: number): Promise<{ payouts: Payout[]; next: Array<Key | null | 0> }> {
    const range = updatedRange(query);
    const pages = await Promise.all(
      shards.map(async (start, n) => {
        if (start === null) return { n, items: [] as Key[], last: undefined };
        const out = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: STATE_INDEX.indexName,
            KeyConditionExpression: `#shard = :shard AND ${range.condition}`,
            ...(query.merchant !== undefined ? { FilterExpression: '#merchant = :merchant' } : {}),
            ExpressionAttributeNames: { '#shard': 'listShard', '#updated': 'updatedAt', ...(query.merchant !== undefined ? { '#merchant': 'platform_merchant_id' } : {}) },
            ExpressionAttributeValues: { ':shard': `${query.state}#${n}`, ...range.values, ...(query.merchant !== undefined ? { ':merchant': query.merchant } : {}) },
            ScanIndexForward: false,
            Limit: query.limit,
            ExclusiveStartKey: start === 0 ? undefined : start,
          }),
        );
        return { n, items: out.Items ?? [], last: out.LastEvaluatedKey };
      }),
    );
    // Newest change first; entries that share an `updatedAt` keep their shard's own order (shard, then
    // place in its page), not the key's: the index does not order those by key, and each shard resumes
    // after the last of its entries used, so what a read uses of a shard must be a prefix of what the
    // shard returned, or an entry before the resume point is never listed (or one after it twice).
    const candidates = pages
      .flatMap(({ n, items }) => items.map((item, at) => ({ n, at, pk: String(item.pk), updatedAt: String(item.updatedAt) })))
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.n - b.n || a.at - b.at);
    const listed = (item: PayoutItem | undefined): item is PayoutItem =>
      item !== undefined && item.state === query.state && (query.userReference === undefined || item.user_reference === query.userReference);
    let used: typeof candidates;
    if (query.userReference === undefined) used = candidates.slice(0, wanted);
    else {
      const brief = new Map((await getMany(candidates.map((c) => c.pk), ['pk', 'state', 'user_reference'])).map((item) => [item.pk, item]));
      let found = 0;
      let end = candidates.length;
      for (const [index, c] of candidates.entries()) {
        if (listed(brief.get(c.pk))) found += 1;
        if (found === wanted) {
          end = index + 1;
          break;
        }
      }
      used = candidates.slice(0, end);
    }
    // Each shard resumes after the last of its entries used; a shard none of whose entries was used
    // resumes where it was; a shard whose query ended and whose entries were all used is done.
    const next = shards.map((start, n): Key | null | 0 => {
      const page = pages[n] as (typeof pages)[number];
      const mine = used.filter((c) => c.n === n);
      const allUsed = mine.length === page.items.length;
      if (start === null || (allUsed && page.last === undefined)) return null;
      if (allUsed && page.last !== undefined) return page.last;
      const lastUsed = mine[mine.length - 1];
      if (!lastUsed) return start;
      return { pk: lastUsed.pk, listShard: `${query.state}#${n}`, updatedAt: lastUsed.updatedAt };
    });
    const byPk = new Map((await getMany(used.map((c) => c.pk))).map((item) => [item.pk, item]));
    const payouts = used.flatMap((c) => {
      const item = byPk.get(c.pk);
      return listed(item) ? [fromItem(item)] : [];
    });
    return { payouts, next };
  }

  /**
   * Final and UNKNOWN payouts: each shard of `by-state` read backwards, merged newest first. A filter
   * (merchant, user_reference) drops entries after they are read and may leave a read short (so may
   * payouts that moved on, or a shard's Query page cut at 1 MB): up to FILTERED_READS reads fill the
   * page, then it is returned with its cursor, however short. Unfiltered, one read fills it.
   */
  async function listFromStateIndex(query: PayoutListQuery): Promise<PayoutListPage> {
    const range = updatedRange(query);
    let shards: Array<Key | null | 0> = query.cursor
      ? readListCursor(query.cursor, query.state, stateCursorOf(query.state, range), stateCursorOf(query.state)).shards
      : (Array(SHARDS.byState).fill(0) as Array<0>);
    const payouts: Payout[] = [];
    for (let reads = 1; ; reads += 1) {
      const read = await stateIndexRead(query, shards, query.limit - payouts.length);
      payouts.push(...read.payouts);
      shards = read.next;
      if (shards.every((s) => s === null)) return { payouts };
      if (payouts.length >= query.limit || reads >= FILTERED_READS) {
        return { payouts, cursor: encodeCursor({ state: query.state, shards }) };
      }
    }
  }

  /**
   * The worker's in-flight states (ACCEPTED, VERIFYING, SUBMITTING, SUBMITTED): the `OPEN#<n>`
   * partitions of the open index hold only the payouts not yet final (few: in flight, or UNKNOWN
   * until settled or handed to a person), read whole; each one's state, merchant, user_reference and last change are
   * read (a few bytes each) to filter and sort, and the full items only for the page.
   */
  async function listInFlight(query: PayoutListQuery): Promise<PayoutListPage> {
    const after = query.cursor ? readListCursor(query.cursor, query.state, openStateCursorOf(query.state)).after : undefined;
    const entries = (
      await Promise.all(
        IN_FLIGHT_KEYS.map((shard) =>
          queryAll(client, {
            TableName: tableName,
            IndexName: OPEN_INDEX.indexName,
            KeyConditionExpression: '#shard = :shard',
            ExpressionAttributeNames: { '#shard': 'openShard' },
            ExpressionAttributeValues: { ':shard': shard },
          }),
        ),
      )
    ).flat();
    const from = query.updatedFrom?.toISOString();
    const to = query.updatedTo?.toISOString();
    const matching = (await getMany(entries.map((e) => String(e.pk)), ['pk', 'state', 'platform_merchant_id', 'updatedAt', 'user_reference']))
      .filter(
        (item) =>
          item.state === query.state &&
          (query.merchant === undefined || item.platform_merchant_id === query.merchant) &&
          (query.userReference === undefined || item.user_reference === query.userReference) &&
          (from === undefined || item.updatedAt >= from) &&
          (to === undefined || item.updatedAt <= to) &&
          (after === undefined || newestFirst({ updatedAt: after[0], pk: after[1] }, item) < 0),
      )
      .sort(newestFirst);
    const shown = matching.slice(0, query.limit);
    const last = shown[shown.length - 1];
    const byPk = new Map((await getMany(shown.map((item) => item.pk))).map((item) => [item.pk, item]));
    // A payout that moved on between the two reads is left out; it shows under its new state.
    const payouts = shown.flatMap((item) => {
      const full = byPk.get(item.pk);
      return full && full.state === query.state ? [fromItem(full)] : [];
    });
    return matching.length > shown.length && last ? { payouts, cursor: encodeCursor({ state: query.state, after: [last.updatedAt, last.pk] }) } : { payouts };
  }

  return {
    ...sweep,

    async listByState(query) {
      // An empty range holds nothing; DynamoDB would refuse its BETWEEN instead of saying so.
      if (isEmptyRange(query.updatedFrom, query.updatedTo)) return { payouts: [] };
      return LISTED_STATES.has(query.state) ? listFromStateIndex(query) : listInFlight(query);
    },

    async stateChangeTimes(state, updatedFrom, updatedTo) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      if (isEmptyRange(updatedFrom, updatedTo)) return [];
      const range = updatedRange({ state, limit: 1, updatedFrom, updatedTo });
      const shards = await Promise.all(
        Array.from({ length: SHARDS.byState }, (_, n) =>
          queryAll(client, {
            TableName: tableName,
            IndexName: STATE_INDEX.indexName,
            KeyConditionExpression: `#shard = :shard AND ${range.condition}`,
            ProjectionExpression: '#updated',
            ExpressionAttributeNames: { '#shard': 'listShard', '#updated': 'updatedAt' },
            ExpressionAttributeValues: { ':shard': `${state}#${n}`, ...range.values },
          }),
        ),
      );
      return shards.flat().map((item) => String(item.updatedAt));
    },

    async findByReference(withdrawalReference) {
      const entries = await payoutKeysByReference(client, tableName, withdrawalReference);
      const found = await Promise.all(entries.map((item) => sweep.get(parsePayoutKey(String(item.pk)))));
      return found.filter((p): p is Payout => p !== undefined);
    },

    markDueNow: nudge.markDueNow,
  };
}
