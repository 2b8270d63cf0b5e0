import { randomBytes } from 'node:crypto';
import { PutItemCommand, type PutItemCommandInput, type PutItemCommandOutput } from '@aws-sdk/client-dynamodb';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { SHARDS, openShardOf, shardOf, watchShardOf } from '@shared/config/resources';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { FINAL_STATES, Payout, type PayoutHistoryEntry, type PayoutRecord, type PayoutState } from '@shared/domain/payout';
import { ConcurrentModificationError } from '@shared/domain/errors';
import type { PayoutItemStore } from '@shared/ports/payouts';
import { conditionHeld } from './conditional-write';
import { documentClient, payoutItemWriter } from './dynamodb-client';

/*
 * A payout's item in the payouts table, and the store of one payout at a time over it (read by
 * identity, written conditionally): all the payout worker needs of the table. Its own module, apart
 * from the index reads of payout-repository.ts (the reconciler's due queries, the console's
 * listings, the callbacks' lookups by reference), so the worker's bundle carries only this part
 * (docs/performance.md, point 2).
 */

/** States kept in the `by-state` index; the others are in flight, listed from the `OPEN#<n>` partitions of `open-by-next-check`. */
export const LISTED_STATES: ReadonlySet<PayoutState> = new Set<PayoutState>(['UNKNOWN', ...FINAL_STATES]);

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
  /** The account's keyed fingerprint (PayoutRecord.accountFingerprint). */
  account_fp?: string;
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
  /** The quarantine nudge's throttle (PayoutRecord.mismatchNudgedAt). */
  mismatchNudgedAt?: string;
  /** A random id of the write that stored this version (see createPayoutItemStore's putItem); not part of the payout. */
  writeId?: string;
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
    account_fp: r.accountFingerprint,
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
    mismatchNudgedAt: r.mismatchNudgedAt,
  };
}

/** The payout an item holds. */
export function fromItem(item: PayoutItem): Payout {
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
    accountFingerprint: item.account_fp,
    mismatchNudgedAt: item.mismatchNudgedAt,
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

/** Whether `by-state` holds this state (the others are the worker's in-flight states, on the open index). */
export function isListedState(state: PayoutState): boolean {
  return LISTED_STATES.has(state);
}

/** What sends the payout item writes: the low-level client of payoutItemWriter, or a given document client (which takes low-level commands too). */
interface ItemWriter {
  send(command: PutItemCommand): Promise<PutItemCommandOutput>;
}

/**
 * The payout item store over the document client. Every write is one conditional single-item write:
 * a new payout on attribute_not_exists(pk), every later version on the expected state and version,
 * with the history list on the same item. No transactions (dynalite has none; they cost double). The
 * writes are low-level PutItems of the marshalled item, sent through `payoutItemWriter()` (its
 * middleware resolved once; see there) unless a client is given: then that client carries every
 * call, writes included, so whatever watches it (a test's counter) sees them all.
 */
export function createPayoutItemStore(tableName: string, client?: DynamoDBDocumentClient): PayoutItemStore {
  // Both taken at first use: a worker's normal path writes and never reads (documentClient()).
  const reader = (): DynamoDBDocumentClient => client ?? documentClient();
  const writer = (): ItemWriter => client ?? payoutItemWriter();
  /**
   * One conditional write of a payout's item, under a fresh `writeId`. Whether its condition held:
   * a refusal is checked against the stored item, because the SDK retries a write whose answer was
   * lost (a time-out, a reset), and when the first attempt had landed the retry is refused by the
   * write's own result. The stored item carrying this write's id means it landed and no version
   * came after it (every version of a payout is a whole-item PutItem made here, which replaces the
   * id; the only other write, payout-nudge's UpdateItem, moves no version): the write held. Without this, a worker would take its own create for another
   * delivery's and never call Payout. Returns the stored item read on a refusal, if any.
   */
  const putItem = async (
    payout: Payout,
    condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>,
  ): Promise<{ held: true } | { held: false; stored?: PayoutItem }> => {
    const writeId = randomBytes(8).toString('base64url');
    const item = marshall({ ...toItem(payout), writeId }, { removeUndefinedValues: true });
    if (await conditionHeld(writer().send(new PutItemCommand({ TableName: tableName, Item: item, ...condition })))) return { held: true };
    const stored = await getItem(payout.record.identity);
    return stored?.writeId === writeId ? { held: true } : { held: false, ...(stored ? { stored } : {}) };
  };
  const getItem = async (identity: PayoutIdentity): Promise<PayoutItem | undefined> => {
    const out = await reader().send(
      new GetCommand({ TableName: tableName, Key: { pk: payoutKey(identity) }, ConsistentRead: true }),
    );
    return out.Item as PayoutItem | undefined;
  };
  const get = async (identity: PayoutIdentity): Promise<Payout | undefined> => {
    const item = await getItem(identity);
    return item ? fromItem(item) : undefined;
  };

  return {
    get,

    async createAccepted(payout) {
      const write = await putItem(payout, { ConditionExpression: 'attribute_not_exists(pk)' });
      if (write.held) return { created: true, payout };
      if (!write.stored) throw new ConcurrentModificationError(`payout ${payout.key} vanished after a conflicting create`);
      return { created: false, payout: fromItem(write.stored) };
    },

    async save(previous, next) {
      const write = await putItem(next, {
        ConditionExpression: '#state = :state AND #version = :version',
        ExpressionAttributeNames: { '#state': 'state', '#version': 'version' },
        ExpressionAttributeValues: { ':state': { S: previous.state }, ':version': { N: String(previous.version) } },
      });
      if (!write.held) throw new ConcurrentModificationError(`payout ${previous.key} is no longer ${previous.state} v${previous.version}`);
      return next;
    },
  };
}
