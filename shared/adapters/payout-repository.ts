import { PutItemCommand, type PutItemCommandInput, type PutItemCommandOutput } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { PAYOUTS_TABLE, REVERSAL_WATCH_MARK_KEY, SHARDS, openShardKeys, openShardOf, shardOf, watchShardKeys, watchShardOf } from '@shared/config/resources';
import { parsePayoutKey, payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { FINAL_STATES, Payout, type PayoutHistoryEntry, type PayoutRecord, type PayoutState } from '@shared/domain/payout';
import { ConcurrentModificationError } from '@shared/domain/errors';
import { conditionHeld } from './conditional-write';
import { decodeCursor, encodeCursor } from './list-cursor';
import type { DuePage, PayoutListPage, PayoutListQuery, PayoutRepository } from '@shared/ports/payouts';
import { documentClient, payoutItemWriter } from './dynamodb-client';
import { createPayoutNudge, payoutKeysByReference } from './payout-nudge';
import { queryAll } from './query-all';

const [OPEN_INDEX, , STATE_INDEX] = PAYOUTS_TABLE.indexes;

/** States kept in the `by-state` index; the others are in flight, listed from the `OPEN#<n>` partitions of `open-by-next-check`. */
const LISTED_STATES: ReadonlySet<PayoutState> = new Set<PayoutState>(['UNKNOWN', ...FINAL_STATES]);

/** The partitions of the payouts not yet final (with the legacy key): the in-flight listings read these. */
const IN_FLIGHT_KEYS = openShardKeys(SHARDS.open);
/** Every partition of the open index, in the order the reconciler reads them: not yet final first, then watched. */
const DUE_KEYS = [...IN_FLIGHT_KEYS, ...watchShardKeys(SHARDS.open)];
/** BatchGetItem calls of one getMany in flight at once. */
const GET_MANY_PARALLEL = 4;

/** `listShard` of a payout in a listed state, else undefined (which keeps it out of `by-state`). */
function listShardOf(pk: string, state: PayoutState): string | undefined {
  return LISTED_STATES.has(state) ? `${state}#${shardOf(pk, SHARDS.byState)}` : undefined;
}

/** The stored item: snake_case identity fields (they key the indexes), the rest as the entity has them. */
export interface PayoutItem {
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
  acknowledged_at?: string;
  refused_at?: string;
  submit_intent_at?: string;
  ask_not_before?: string;
  checks: number;
  reason?: string;
  retry_of?: string;
  retried_as?: string;
  history: PayoutHistoryEntry[];
  createdAt: string;
  updatedAt: string;
  /**
   * Present only while open (`OPEN#<n>`), or final with a look scheduled by time (`WATCH#<n>`:
   * NEEDS_REVIEW under its watch, a SUCCEEDED payout with one look pending): this is what makes the
   * `open-by-next-check` index sparse.
   */
  openShard?: string;
  nextCheckAt?: string;
  /** Present only in UNKNOWN and final states: this is what makes the `by-state` index sparse. */
  listShard?: string;
}

/** The stored item of a payout, index attributes included (also what bulk seeding in the bench writes). */
export function toItem(payout: Payout): PayoutItem {
  const r = payout.record;
  // A final payout stays in the index while it has a look scheduled by time (NEEDS_REVIEW under its
  // watch; a SUCCEEDED payout only while one look is pending: its reversal watch goes by `by-state`).
  const open = !payout.isFinal || payout.isWatched;
  const pk = payoutKey(r.identity);
  return {
    pk,
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
    acknowledged_at: r.acknowledgedAt,
    refused_at: r.refusedAt,
    submit_intent_at: r.submitIntentAt,
    ask_not_before: r.askNotBefore,
    checks: r.checks,
    reason: r.reason,
    retry_of: r.retryOf,
    retried_as: r.retriedAs,
    history: [...r.history],
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    openShard: !open ? undefined : payout.isFinal ? watchShardOf(pk, SHARDS.open) : openShardOf(pk, SHARDS.open),
    nextCheckAt: open ? r.nextCheckAt : undefined,
    listShard: listShardOf(pk, r.state),
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
    acknowledgedAt: item.acknowledged_at,
    refusedAt: item.refused_at,
    submitIntentAt: item.submit_intent_at,
    askNotBefore: item.ask_not_before,
    checks: item.checks,
    nextCheckAt: item.nextCheckAt,
    reason: item.reason,
    retryOf: item.retry_of,
    retriedAs: item.retried_as,
    history: item.history,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
  };
  return Payout.fromRecord(record);
}

type Key = Record<string, unknown>;

/** A cursor over index partitions read one after another: which partition, and where in it. */
interface ShardCursor {
  s: number;
  k?: Key;
}
const isShardCursorOf =
  (count: number) =>
  (v: unknown): v is ShardCursor =>
    typeof v === 'object' && v !== null && Number.isInteger((v as ShardCursor).s) && (v as ShardCursor).s >= 0 && (v as ShardCursor).s < count;

/** The stored shape of the reversal watch's progress (see ReversalWatchProgress). */
interface WatchMarkItem {
  pk: typeof REVERSAL_WATCH_MARK_KEY;
  coveredUntil: string;
  version: number;
  pendingUntil?: string;
  pendingAgeMs?: number;
  pendingCursor?: string;
}

/** The by-state cursor: per shard, where to resume (a key), or null once the shard is exhausted. */
interface StateCursor {
  shards: Array<Key | null | 0>;
}
const isStateCursor = (v: unknown): v is StateCursor =>
  typeof v === 'object' && v !== null && Array.isArray((v as StateCursor).shards) && (v as StateCursor).shards.length === SHARDS.byState;

/** The open-state cursor: the last (updatedAt, pk) shown; the next page starts after it. */
interface OpenStateCursor {
  after: [string, string];
}
const isOpenStateCursor = (v: unknown): v is OpenStateCursor =>
  typeof v === 'object' && v !== null && Array.isArray((v as OpenStateCursor).after) && (v as OpenStateCursor).after.length === 2;

/** The key condition on `updatedAt` for an optional date range (inclusive at both ends). */
function updatedRange(query: PayoutListQuery): { condition: string; values: Record<string, string> } {
  // Every ISO timestamp sorts after '0' and before '~' (a key condition may not hold an empty string).
  const from = query.updatedFrom?.toISOString() ?? '0';
  const to = query.updatedTo?.toISOString() ?? '~';
  return { condition: '#updated BETWEEN :from AND :to', values: { ':from': from, ':to': to } };
}

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

/** Whether `by-state` holds this state (the others are the worker's in-flight states, on the open index). */
export function isListedState(state: PayoutState): boolean {
  return LISTED_STATES.has(state);
}

/** What sends the payout item writes: the low-level client of payoutItemWriter, or a given document client (which takes low-level commands too). */
interface ItemWriter {
  send(command: PutItemCommand): Promise<PutItemCommandOutput>;
}

/**
 * The payouts table through the DynamoDB document client. Every write is one conditional single-item
 * write: a new payout on attribute_not_exists(pk), every later version on the expected state and
 * version, with the history list on the same item. No transactions (dynalite has none; they cost double).
 * The payout item writes are low-level PutItems of the marshalled item, sent through
 * `payoutItemWriter()` (its middleware resolved once; see there) unless a client is given: then that
 * client carries every call, writes included, so whatever watches it (a test's counter) sees them all.
 */
export function createPayoutRepository(tableName: string, client: DynamoDBDocumentClient = documentClient): PayoutStore {
  const given = client !== documentClient;
  const writer = (): ItemWriter => (given ? client : payoutItemWriter());
  /** One conditional write of a payout's item. */
  const putItem = (payout: Payout, condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>) =>
    writer().send(new PutItemCommand({ TableName: tableName, Item: marshall(toItem(payout), { removeUndefinedValues: true }), ...condition }));
  const nudge = createPayoutNudge(tableName, client);
  const get = async (identity: PayoutIdentity): Promise<Payout | undefined> => {
    const out = await client.send(
      new GetCommand({ TableName: tableName, Key: { pk: payoutKey(identity) }, ConsistentRead: true }),
    );
    return out.Item ? fromItem(out.Item as PayoutItem) : undefined;
  };

  /**
   * One page of payout keys from index partitions read one after another, each in its index order;
   * a partition with nothing left is skipped rather than handed back as an empty page.
   */
  async function keysAcrossShards(shards: readonly string[], query: (shard: string) => QueryCommandInput, limit: number, cursor?: string): Promise<DuePage> {
    let at: ShardCursor = cursor ? decodeCursor(cursor, isShardCursorOf(shards.length)) : { s: 0 };
    for (;;) {
      const out = await client.send(new QueryCommand({ ...query(shards[at.s] as string), Limit: limit, ExclusiveStartKey: at.k }));
      const identities = (out.Items ?? []).map((item) => parsePayoutKey(String(item.pk)));
      const page: DuePage = { identities, scannedCount: out.ScannedCount ?? identities.length };
      const nextShard = at.s + 1 < shards.length ? { s: at.s + 1 } : undefined;
      const next: ShardCursor | undefined = out.LastEvaluatedKey ? { s: at.s, k: out.LastEvaluatedKey } : nextShard;
      if (identities.length === 0 && next && !out.LastEvaluatedKey) {
        at = next;
        continue;
      }
      return next ? { ...page, cursor: encodeCursor(next) } : page;
    }
  }

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

  /** Final and UNKNOWN payouts: each shard of `by-state` read backwards, merged newest first. */
  async function listFromStateIndex(query: PayoutListQuery): Promise<PayoutListPage> {
    const cursor = query.cursor ? decodeCursor(query.cursor, isStateCursor) : { shards: Array(SHARDS.byState).fill(0) as Array<0> };
    const range = updatedRange(query);
    const pages = await Promise.all(
      cursor.shards.map(async (start, n) => {
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
    const candidates = pages
      .flatMap(({ n, items }) => items.map((item) => ({ n, item, pk: String(item.pk), updatedAt: String(item.updatedAt) })))
      .sort(newestFirst);
    const shown = candidates.slice(0, query.limit);
    // Each shard resumes after the last of its entries shown; a shard none of whose entries was shown
    // resumes where it was; a shard whose query ended and whose entries were all shown is done.
    const next = cursor.shards.map((start, n): Key | null | 0 => {
      const page = pages[n] as (typeof pages)[number];
      const mine = shown.filter((c) => c.n === n);
      const allShown = mine.length === page.items.length;
      if (start === null || (allShown && page.last === undefined)) return null;
      if (allShown && page.last !== undefined) return page.last;
      const lastShown = mine[mine.length - 1];
      if (!lastShown) return start;
      return { pk: lastShown.pk, listShard: `${query.state}#${n}`, updatedAt: lastShown.updatedAt };
    });
    const byPk = new Map((await getMany(shown.map((c) => c.pk))).map((item) => [item.pk, item]));
    const payouts = shown.flatMap((c) => {
      const item = byPk.get(c.pk);
      // An entry whose payout moved on since the index answered is left out; it shows under its new state.
      return item && item.state === query.state ? [fromItem(item)] : [];
    });
    const more = next.some((s) => s !== null);
    return more ? { payouts, cursor: encodeCursor({ shards: next }) } : { payouts };
  }

  /**
   * The worker's in-flight states (ACCEPTED, VERIFYING, SUBMITTING, SUBMITTED): the `OPEN#<n>`
   * partitions of the open index hold only the payouts not yet final (few: in flight, or UNKNOWN
   * until settled or handed to a person), read whole; each one's state, merchant and last change are
   * read (a few bytes each) to filter and sort, and the full items only for the page.
   */
  async function listInFlight(query: PayoutListQuery): Promise<PayoutListPage> {
    const after = query.cursor ? decodeCursor(query.cursor, isOpenStateCursor).after : undefined;
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
    const matching = (await getMany(entries.map((e) => String(e.pk)), ['pk', 'state', 'platform_merchant_id', 'updatedAt']))
      .filter(
        (item) =>
          item.state === query.state &&
          (query.merchant === undefined || item.platform_merchant_id === query.merchant) &&
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
    return matching.length > shown.length && last ? { payouts, cursor: encodeCursor({ after: [last.updatedAt, last.pk] }) } : { payouts };
  }

  return {
    get,

    async createAccepted(payout) {
      const created = await conditionHeld(putItem(payout, { ConditionExpression: 'attribute_not_exists(pk)' }));
      if (created) return { created: true, payout };
      const existing = await get(payout.record.identity);
      if (!existing) throw new ConcurrentModificationError(`payout ${payout.key} vanished after a conflicting create`);
      return { created: false, payout: existing };
    },

    async save(previous, next) {
      const saved = await conditionHeld(
        putItem(next, {
          ConditionExpression: '#state = :state AND #version = :version',
          ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
          ExpressionAttributeValues: { ':state': { S: previous.state }, ':version': { N: String(previous.version) } },
        }),
      );
      if (!saved) throw new ConcurrentModificationError(`payout ${previous.key} is no longer ${previous.state} v${previous.version}`);
      return next;
    },

    async queryDue(now, limit, cursor) {
      // One shard after another (not yet final, then watched); within a shard, oldest due first.
      return keysAcrossShards(
        DUE_KEYS,
        (shard) => ({
          TableName: tableName,
          IndexName: OPEN_INDEX.indexName,
          KeyConditionExpression: '#shard = :open AND #next <= :now',
          ExpressionAttributeNames: { '#shard': 'openShard', '#next': 'nextCheckAt' },
          ExpressionAttributeValues: { ':open': shard, ':now': now.toISOString() },
        }),
        limit,
        cursor,
      );
    },

    async queryChanged(state, from, to, limit, cursor) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      // [from, to): BETWEEN is inclusive, and every stored time is an ISO string to the millisecond.
      const last = new Date(to.getTime() - 1).toISOString();
      return keysAcrossShards(
        Array.from({ length: SHARDS.byState }, (_, n) => `${state}#${n}`),
        (shard) => ({
          TableName: tableName,
          IndexName: STATE_INDEX.indexName,
          KeyConditionExpression: '#shard = :shard AND #updated BETWEEN :from AND :last',
          ExpressionAttributeNames: { '#shard': 'listShard', '#updated': 'updatedAt' },
          ExpressionAttributeValues: { ':shard': shard, ':from': from.toISOString(), ':last': last },
        }),
        limit,
        cursor,
      );
    },

    async reversalWatchProgress() {
      const out = await client.send(new GetCommand({ TableName: tableName, Key: { pk: REVERSAL_WATCH_MARK_KEY }, ConsistentRead: true }));
      const item = out.Item as WatchMarkItem | undefined;
      if (!item) return undefined;
      const pending = item.pendingUntil === undefined ? undefined : { until: new Date(item.pendingUntil), ageMs: item.pendingAgeMs ?? 0, ...(item.pendingCursor ? { cursor: item.pendingCursor } : {}) };
      return { coveredUntil: new Date(item.coveredUntil), version: item.version, ...(pending ? { pending } : {}) };
    },

    async saveReversalWatchProgress(previous, next) {
      const item: WatchMarkItem = {
        pk: REVERSAL_WATCH_MARK_KEY,
        coveredUntil: next.coveredUntil.toISOString(),
        version: (previous?.version ?? 0) + 1,
        pendingUntil: next.pending?.until.toISOString(),
        pendingAgeMs: next.pending?.ageMs,
        pendingCursor: next.pending?.cursor,
      };
      return conditionHeld(
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ConditionExpression: previous === undefined ? 'attribute_not_exists(pk)' : '#version = :version',
            ...(previous === undefined ? {} : { ExpressionAttributeNames: { '#version': 'version' }, ExpressionAttributeValues: { ':version': previous.version } }),
          }),
        ),
      );
    },

    async listByState(query) {
      return LISTED_STATES.has(query.state) ? listFromStateIndex(query) : listInFlight(query);
    },

    async stateChangeTimes(state, updatedFrom, updatedTo) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
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
      const found = await Promise.all(entries.map((item) => get(parsePayoutKey(String(item.pk)))));
      return found.filter((p): p is Payout => p !== undefined);
    },

    markDueNow: nudge.markDueNow,
  };
}
