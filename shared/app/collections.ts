import {
  applyNotice,
  newCollection,
  InvalidCollectionError,
  MAX_ORDER_ID_LENGTH,
  recordCreation,
  type Collection,
  type CollectionNotice,
  type CreationAnswer,
} from '@shared/domain/collection';
import type { OrderNotificationEvent } from '@shared/domain/callbacks';
import { ConcurrentModificationError, preview } from '@shared/domain/errors';
import { ProviderError, ProviderRejectedError } from '@shared/providers/provider-errors';
import type { CollectionListPage, CollectionListQuery, CollectionOrderService, CollectionStore } from '@shared/ports/collections';
import type { CredentialsSource } from '@shared/ports/payouts';
import { METRIC } from '@shared/observability/metric-names';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import { withCredentialRefresh } from './credential-refresh';

/** No collection has this order id. */
export class CollectionNotFoundError extends Error {
  override name = 'CollectionNotFoundError';
}

/** A collection with this order id exists already and the provider has answered about it (or it differs). */
export class CollectionExistsError extends Error {
  override name = 'CollectionExistsError';
}

/** A list query that cannot run (a limit out of range, `until` not after `since`, a range over MAX_COLLECTION_RANGE_DAYS days). */
export class CollectionQueryError extends Error {
  override name = 'CollectionQueryError';
}

/**
 * Attempts at a conditional write that lost to a concurrent one (a notification racing the creation,
 * or several notifications at once). Each round one writer wins and a notice with nothing left to
 * change stops, so N simultaneous writers need at most N rounds; beyond this the receiver answers
 * 500 and the provider's redelivery applies it (the event is already stored).
 */
const WRITE_ATTEMPTS = 10;

/** Re-reads and re-applies `change` until its conditional write wins; undefined when there is nothing to write. */
async function updateCollection(
  store: Pick<CollectionStore, 'get' | 'save'>,
  partnerOrderId: string,
  change: (current: Collection) => Collection | undefined,
): Promise<Collection | undefined> {
  for (let attempt = 1; ; attempt += 1) {
    const current = await store.get(partnerOrderId);
    if (current === undefined) return undefined;
    const next = change(current);
    if (next === undefined) return current;
    try {
      return await store.save(current, next);
    } catch (error) {
      if (!(error instanceof ConcurrentModificationError) || attempt >= WRITE_ATTEMPTS) throw error;
    }
  }
}

export interface CreateCollectionDeps {
  collections: CollectionStore;
  provider: CollectionOrderService;
  credentials: CredentialsSource;
  clock: Clock;
  log: Log;
}

export interface CreateCollectionInput {
  /** payrelay's order id (the provider's partner_order_id); unique per deployment. */
  partnerOrderId: string;
  amount: string;
  currency: string;
}

export interface CreatedCollection {
  collection: Collection;
  /**
   * The account the customer pays into, unmasked, as the provider answered it: shown once to the
   * operator who created the order, never stored or logged in full.
   */
  virtualAccountNumber?: string;
}

/** Whether the stored collection is the same order and the provider never clearly answered about it. */
function resendable(existing: Collection, input: Collection): boolean {
  return (
    (existing.creation === 'requested' || existing.creation === 'unknown') &&
    existing.amount === input.amount &&
    existing.currency === input.currency &&
    existing.platformMerchantId === input.platformMerchantId
  );
}

/**
 * Creates a collection order: stores the collection first (one conditional write, so an order id is
 * used once), then asks the payout service, then records its answer. A definite refusal fails the
 * order; an unclear answer (time-out, 5xx) leaves it PENDING with creation `unknown`: if the order
 * exists, its notifications move it. Running it again for an order the provider never clearly
 * answered re-sends the same order (a provider refusal of the duplicate then proves it exists).
 * @throws InvalidCollectionError, InvalidAmountError, UnsupportedCurrencyError for bad input (nothing stored)
 * @throws CollectionExistsError when the order id is taken by an order the provider answered about, or by a different one
 * @throws ProviderUnavailableError / ProviderUnauthorizedError when nothing reached the provider (stored as `requested`; run it again)
 */
export async function createCollection(deps: CreateCollectionDeps, input: CreateCollectionInput): Promise<CreatedCollection> {
  const creds = await deps.credentials.get();
  const fresh = newCollection({
    partnerOrderId: input.partnerOrderId,
    platformMerchantId: creds.platformMerchantId,
    amount: input.amount,
    currency: input.currency,
    now: deps.clock.now(),
  });
  const resend = !(await deps.collections.create(fresh));
  if (resend) {
    const existing = await deps.collections.get(fresh.partnerOrderId);
    if (existing !== undefined && !resendable(existing, fresh)) {
      throw new CollectionExistsError(
        `collection ${fresh.partnerOrderId} exists already (${existing.amount} ${existing.currency}, order ${existing.orderStatus}, payment ${existing.paymentStatus}); choose another order id`,
      );
    }
  }
  const logKeys = { partnerOrderId: fresh.partnerOrderId, resend };

  let answer: CreationAnswer;
  let virtualAccountNumber: string | undefined;
  try {
    const reply = await withCredentialRefresh(deps.credentials, (c) =>
      deps.provider.createCollectionOrder({ partnerOrderId: fresh.partnerOrderId, amount: fresh.amount, currency: fresh.currency, at: deps.clock.now() }, c),
    );
    const account = reply.data?.virtual_account;
    virtualAccountNumber = account?.account_number;
    answer = {
      kind: 'accepted',
      orderReference: reply.data?.order_reference,
      virtualAccount: account && { bankName: account.bank_name, accountName: account.account_name, accountNumber: account.account_number },
    };
  } catch (error) {
    if (!(error instanceof ProviderError) || error.kind === 'unavailable' || error.kind === 'unauthorized') {
      // Nothing reached the provider (or it did not accept the keys): the collection stays `requested`.
      deps.log.warn('collection order not sent', { ...logKeys, error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
    // A refusal of a re-sent order as a duplicate proves the first request created it.
    const duplicateOfResend = resend && error instanceof ProviderRejectedError && error.duplicateReference;
    answer = error.kind === 'rejected' && !duplicateOfResend ? { kind: 'refused', reason: error.message } : { kind: 'unknown', reason: error.message };
  }

  const collection = await updateCollection(deps.collections, fresh.partnerOrderId, (current) =>
    current.creation === 'accepted' || current.creation === 'refused' ? undefined : recordCreation(current, answer, deps.clock.now()),
  );
  if (collection === undefined) throw new CollectionNotFoundError(`collection ${fresh.partnerOrderId} vanished while it was created`);
  const done = { ...logKeys, creation: collection.creation, orderReference: collection.orderReference };
  if (answer.kind === 'accepted') deps.log.info('collection order created', done);
  else deps.log.warn('collection order not confirmed by the provider', { ...done, reason: preview(answer.reason, 300) });
  return { collection, ...(answer.kind === 'accepted' && virtualAccountNumber ? { virtualAccountNumber } : {}) };
}

export interface CollectionProjectionDeps {
  collections: Pick<CollectionStore, 'get' | 'save'>;
  clock: Clock;
  log: Log;
  /** Counts a contradicted final order status (the CollectionStatusContradicted alarm). */
  telemetry: Telemetry;
}

/** `applied`: the collection moved; `unchanged`: it already reflected the notice; `not-a-collection`: no collection has that id. */
export type NoticeResult = 'applied' | 'unchanged' | 'not-a-collection';

/**
 * Applies one authentic, stored order notification to the collection it names, forward only (see
 * applyNotice). Idempotent, so a redelivery or a replay is harmless. A notice that names no
 * collection is left to the payout path.
 */
export async function applyCollectionNotice(
  deps: CollectionProjectionDeps,
  partnerOrderId: string,
  notice: CollectionNotice,
): Promise<NoticeResult> {
  let ignored: string[] = [];
  let contradiction: string | undefined;
  let contradicts = false;
  let moved = false;
  const result = await updateCollection(deps.collections, partnerOrderId, (current) => {
    const outcome = applyNotice(current, notice, deps.clock.now());
    ignored = outcome.ignored;
    contradiction = outcome.contradiction;
    contradicts = outcome.contradicts === true;
    moved = outcome.next !== undefined;
    return outcome.next;
  });
  if (result === undefined) return 'not-a-collection';
  const logKeys = { partnerOrderId, eventId: notice.eventId, orderStatus: result.orderStatus, paymentStatus: result.paymentStatus };
  if (ignored.length > 0) deps.log.warn('order notification partly ignored for a collection', { ...logKeys, ignored: ignored.map((i) => preview(i, 200)) });
  if (contradicts) {
    // Counted on every apply of a contradicting notice, recorded now or already: a write that landed
    // but was reported lost (a retried conditional write) finds it recorded, and must still count.
    // A replay counts it again: a second page, never a missed one.
    deps.telemetry.count(METRIC.collectionStatusContradicted);
    deps.log.error('collection order status contradicted; recorded, settle it with the provider', {
      ...logKeys,
      contradiction: contradiction ?? 'already recorded',
      contradictedBy: result.contradictedBy,
    });
  }
  if (moved) deps.log.info('collection updated from an order notification', logKeys);
  return moved ? 'applied' : 'unchanged';
}

/**
 * Applies a recognized order notification to the collection its partner_order_id names, if one
 * does (the receiver and replay both come through here).
 */
export function applyToCollection(deps: CollectionProjectionDeps, event: OrderNotificationEvent, eventId: string): Promise<NoticeResult> {
  if (event.partnerOrderId === undefined) return Promise.resolve('not-a-collection');
  return applyCollectionNotice(deps, event.partnerOrderId, {
    orderStatus: event.orderStatus,
    paymentStatus: event.orderPaymentStatus,
    orderReference: event.orderReference,
    eventId,
  });
}

/**
 * One collection by its order id.
 * @throws InvalidCollectionError for an empty order id (it could name none; the store refuses an empty key)
 * @throws CollectionNotFoundError when none has it
 */
export async function getCollection(deps: { collections: Pick<CollectionStore, 'get'> }, partnerOrderId: string): Promise<Collection> {
  if (partnerOrderId.trim() === '') throw new InvalidCollectionError('the order id (partner_order_id) is empty');
  // Longer than any order id a collection is created with: the table would refuse it as a key.
  if (partnerOrderId.trim().length > MAX_ORDER_ID_LENGTH) {
    throw new InvalidCollectionError(`the order id is longer than ${MAX_ORDER_ID_LENGTH} characters, so no collection has it`);
  }
  const found = await deps.collections.get(partnerOrderId.trim());
  if (found === undefined) throw new CollectionNotFoundError(`no collection with order id ${preview(partnerOrderId)}`);
  return found;
}

/** Largest page a list returns. */
export const MAX_COLLECTION_PAGE = 1000;

/**
 * Longest range a list covers, in days (`until` minus `since`; `until` defaults to now). The listing
 * reads one index partition per day, so a walk through the whole range costs up to one Query a day:
 * 400 is a year and a month (a year-end or year-on-year look back with room to spare) and keeps a
 * full walk to 400 Queries. Older orders are listed a range at a time (`--until`).
 */
export const MAX_COLLECTION_RANGE_DAYS = 400;
const DAY_MS = 86_400_000;

/**
 * One page of collections created in a time range, newest first, optionally of one order or
 * payment status. Pass the returned cursor back for the next page.
 * @throws CollectionQueryError for a limit outside 1..1000, a range whose end is not after its start
 *   or a range of more than MAX_COLLECTION_RANGE_DAYS days
 * @throws InvalidListCursorError for a cursor this listing did not hand out
 */
export async function listCollections(
  deps: { collections: Pick<CollectionStore, 'list'>; clock: Clock },
  query: CollectionListQuery,
): Promise<CollectionListPage> {
  if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_COLLECTION_PAGE) {
    throw new CollectionQueryError(`limit must be a whole number from 1 to ${MAX_COLLECTION_PAGE}`);
  }
  const until = query.until ?? deps.clock.now();
  if (Number.isNaN(query.since.getTime()) || Number.isNaN(until.getTime()) || until <= query.since) {
    throw new CollectionQueryError('the time range needs an end after its start');
  }
  if (until.getTime() - query.since.getTime() > MAX_COLLECTION_RANGE_DAYS * DAY_MS) {
    throw new CollectionQueryError(
      `the time range from ${query.since.toISOString()} to ${until.toISOString()} covers more than ${MAX_COLLECTION_RANGE_DAYS} days, the most one list covers: choose a later since, or an until at most ${MAX_COLLECTION_RANGE_DAYS} days after it`,
    );
  }
  return deps.collections.list({ ...query, until });
}
