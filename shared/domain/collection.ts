import { maskAccount } from './account';
import { DomainError, preview } from './errors';
import { isWellFormedText } from './identity';
import { parseAmount } from './money';

/**
 * A collection order: money a customer pays in to the merchant through the payout service (a
 * virtual account the provider opens for the order). payrelay creates it, then follows it only
 * through the provider's order notifications. Two statuses move independently and only forward:
 * order PENDING -> COMPLETED | EXPIRED | CANCELED | FAILED (a final order status never changes);
 * payment PENDING -> PAID -> REFUND.
 */

export const ORDER_STATUSES = ['PENDING', 'COMPLETED', 'EXPIRED', 'CANCELED', 'FAILED'] as const;
export type CollectionOrderStatus = (typeof ORDER_STATUSES)[number];

export const PAYMENT_STATUSES = ['PENDING', 'PAID', 'REFUND'] as const;
export type CollectionPaymentStatus = (typeof PAYMENT_STATUSES)[number];

// The provider's pages also show INITIATED for a new order, and both spellings of "canceled".
const ORDER_WORDS: Readonly<Record<string, CollectionOrderStatus>> = {
  PENDING: 'PENDING',
  INITIATED: 'PENDING',
  COMPLETED: 'COMPLETED',
  EXPIRED: 'EXPIRED',
  CANCELED: 'CANCELED',
  CANCELLED: 'CANCELED',
  FAILED: 'FAILED',
};

const PAYMENT_WORDS: Readonly<Record<string, CollectionPaymentStatus>> = {
  PENDING: 'PENDING',
  PAID: 'PAID',
  REFUND: 'REFUND',
  REFUNDED: 'REFUND',
};

const PAYMENT_RANK: Readonly<Record<CollectionPaymentStatus, number>> = { PENDING: 0, PAID: 1, REFUND: 2 };

/** Longest partner_order_id accepted: the same bound as a withdrawal_reference. */
export const MAX_ORDER_ID_LENGTH = 128;

/** The provider's order status word in payrelay's terms, or undefined for a word it does not know. */
export function normalizeOrderStatus(word: string | undefined): CollectionOrderStatus | undefined {
  return word === undefined ? undefined : ORDER_WORDS[word.trim().toUpperCase()];
}

/** The provider's payment status word in payrelay's terms, or undefined for a word it does not know. */
export function normalizePaymentStatus(word: string | undefined): CollectionPaymentStatus | undefined {
  return word === undefined ? undefined : PAYMENT_WORDS[word.trim().toUpperCase()];
}

/** Input that cannot make a collection (an empty or overlong order id, an invalid amount). */
export class InvalidCollectionError extends DomainError {
  override name = 'InvalidCollectionError';
}

/** The account the customer pays into, as kept: the number masked (money-safety rule 7). */
export interface VirtualAccount {
  bankName?: string;
  accountName?: string;
  accountNumberMasked?: string;
}

/** One change of a collection, kept forever on the item. */
export interface CollectionHistoryEntry {
  at: string;
  orderStatus: CollectionOrderStatus;
  paymentStatus: CollectionPaymentStatus;
  /** What moved it: `created`, `provider accepted`, `provider refused`, or `notification`. */
  cause: string;
  /** The stored event (events table key) of a notification that moved it. */
  eventId?: string;
  note?: string;
}

/** A collection as stored: identity `partnerOrderId` (payrelay's own id, sent to the provider). */
export interface Collection {
  readonly partnerOrderId: string;
  readonly platformMerchantId: string;
  /** Canonical decimal string for the currency. */
  readonly amount: string;
  readonly currency: string;
  readonly orderStatus: CollectionOrderStatus;
  readonly paymentStatus: CollectionPaymentStatus;
  /** `requested`: stored, the provider's answer not yet seen; `accepted` / `refused`: it answered; `unknown`: no clear answer. */
  readonly creation: 'requested' | 'accepted' | 'refused' | 'unknown';
  /** The provider's own reference of the order, once it answered with one. */
  readonly orderReference?: string;
  readonly virtualAccount?: VirtualAccount;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Bumped by every write; the conditional write checks it. */
  readonly version: number;
  readonly history: readonly CollectionHistoryEntry[];
  /**
   * Final order statuses notifications gave after the order had another one (sorted, each once).
   * The first final status stays (which one arrived first is chance), so a person must settle with
   * the provider which is true; with these kept, every final word seen is on the item whatever the
   * arrival order.
   */
  readonly contradictedBy?: readonly CollectionOrderStatus[];
}

export interface NewCollectionInput {
  partnerOrderId: string;
  platformMerchantId: string;
  amount: string;
  currency: string;
  now: Date;
}

/**
 * A new collection, PENDING / PENDING, before the provider is asked.
 * @throws InvalidCollectionError for an empty, overlong or malformed order id or merchant id
 * @throws InvalidAmountError / UnsupportedCurrencyError for an amount invalid for its currency
 */
export function newCollection(input: NewCollectionInput): Collection {
  const partnerOrderId = input.partnerOrderId.trim();
  if (partnerOrderId === '') throw new InvalidCollectionError('the order id (partner_order_id) is empty');
  if (partnerOrderId.length > MAX_ORDER_ID_LENGTH) {
    throw new InvalidCollectionError(`the order id is longer than ${MAX_ORDER_ID_LENGTH} characters`);
  }
  if (!isWellFormedText(partnerOrderId)) throw new InvalidCollectionError('the order id is not well-formed Unicode text');
  if (input.platformMerchantId.trim() === '') throw new InvalidCollectionError('the platform_merchant_id is empty');
  const amount = parseAmount(input.amount, input.currency);
  const at = input.now.toISOString();
  return {
    partnerOrderId,
    platformMerchantId: input.platformMerchantId,
    amount,
    currency: input.currency,
    orderStatus: 'PENDING',
    paymentStatus: 'PENDING',
    creation: 'requested',
    createdAt: at,
    updatedAt: at,
    version: 0,
    history: [{ at, orderStatus: 'PENDING', paymentStatus: 'PENDING', cause: 'created' }],
  };
}

/** What the provider answered to the creation call, as recorded on the collection. */
export type CreationAnswer =
  | { kind: 'accepted'; orderReference?: string; virtualAccount?: { bankName?: string; accountName?: string; accountNumber?: string } }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

/**
 * Records the provider's answer to the creation call. A refusal fails the order (nothing was
 * created, nobody can pay it); an unclear answer changes no status: a notification, if the order
 * exists, will move it. A notification that arrived first is never undone.
 */
export function recordCreation(collection: Collection, answer: CreationAnswer, now: Date): Collection {
  const at = now.toISOString();
  if (answer.kind === 'accepted') {
    const account = answer.virtualAccount;
    return {
      ...collection,
      creation: 'accepted',
      ...(answer.orderReference ? { orderReference: answer.orderReference } : {}),
      ...(account
        ? {
            virtualAccount: {
              bankName: account.bankName,
              accountName: account.accountName,
              accountNumberMasked: account.accountNumber ? maskAccount(account.accountNumber) : undefined,
            },
          }
        : {}),
      updatedAt: at,
      history: [...collection.history, { at, orderStatus: collection.orderStatus, paymentStatus: collection.paymentStatus, cause: 'provider accepted' }],
    };
  }
  const refused = answer.kind === 'refused' && collection.orderStatus === 'PENDING' && collection.paymentStatus === 'PENDING';
  const orderStatus = refused ? 'FAILED' : collection.orderStatus;
  return {
    ...collection,
    creation: answer.kind,
    orderStatus,
    updatedAt: at,
    history: [
      ...collection.history,
      {
        at,
        orderStatus,
        paymentStatus: collection.paymentStatus,
        cause: answer.kind === 'refused' ? 'provider refused' : 'provider answer unclear',
        note: preview(answer.reason, 300),
      },
    ],
  };
}

/** What an order notification says about a collection, in the provider's words. */
export interface CollectionNotice {
  orderStatus?: string;
  paymentStatus?: string;
  orderReference?: string;
  /** The stored event it came from. */
  eventId: string;
}

/** The result of applying a notice: the next collection when it changes anything, and what was ignored. */
export interface NoticeOutcome {
  next?: Collection;
  /** Parts of the notice left alone, in words (a backward move, an unknown word). */
  ignored: string[];
  /** A final order status contradicting the collection's, recorded now for the first time (`contradictedBy`). */
  contradiction?: string;
  /** The notice gives a final order status contradicting the collection's, recorded now or before. */
  contradicts?: boolean;
}

/**
 * Applies an order notification to a collection, forward only: the order status leaves PENDING once
 * and never changes again; the payment status only climbs PENDING -> PAID -> REFUND. Repeated,
 * stale or out-of-order notices change nothing, so applying one twice is harmless (replay relies on it).
 */
export function applyNotice(collection: Collection, notice: CollectionNotice, now: Date): NoticeOutcome {
  const ignored: string[] = [];
  let orderStatus = collection.orderStatus;
  let paymentStatus = collection.paymentStatus;
  let contradictedBy = collection.contradictedBy;
  let contradiction: string | undefined;
  let contradicts = false;

  const order = normalizeOrderStatus(notice.orderStatus);
  if (notice.orderStatus !== undefined && order === undefined) ignored.push(`unknown order status ${preview(notice.orderStatus)}`);
  if (order !== undefined && order !== orderStatus) {
    if (orderStatus === 'PENDING') orderStatus = order;
    else if (order === 'PENDING') ignored.push(`order status PENDING after ${orderStatus} (stale)`);
    else {
      contradicts = true;
      if (!(contradictedBy ?? []).includes(order)) {
        contradictedBy = [...(contradictedBy ?? []), order].sort();
        contradiction = `order status ${order} contradicts the final ${orderStatus}: ${orderStatus} stays until a person settles it with the provider`;
      }
    }
  }

  const payment = normalizePaymentStatus(notice.paymentStatus);
  if (notice.paymentStatus !== undefined && payment === undefined) ignored.push(`unknown payment status ${preview(notice.paymentStatus)}`);
  if (payment !== undefined && payment !== paymentStatus) {
    if (PAYMENT_RANK[payment] > PAYMENT_RANK[paymentStatus]) paymentStatus = payment;
    else ignored.push(`payment status ${payment} after ${paymentStatus} (stale)`);
  }

  const orderReference = collection.orderReference ?? notice.orderReference;
  const changed =
    orderStatus !== collection.orderStatus ||
    paymentStatus !== collection.paymentStatus ||
    orderReference !== collection.orderReference ||
    contradiction !== undefined;
  if (!changed) return { ignored, ...(contradicts ? { contradicts } : {}) };
  const at = now.toISOString();
  return {
    ignored,
    ...(contradicts ? { contradicts } : {}),
    ...(contradiction ? { contradiction } : {}),
    next: {
      ...collection,
      orderStatus,
      paymentStatus,
      ...(orderReference ? { orderReference } : {}),
      ...(contradictedBy ? { contradictedBy } : {}),
      updatedAt: at,
      history: [
        ...collection.history,
        { at, orderStatus, paymentStatus, cause: 'notification', eventId: notice.eventId, ...(contradiction ? { note: contradiction } : {}) },
      ],
    },
  };
}
