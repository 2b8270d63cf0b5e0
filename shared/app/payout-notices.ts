import { MAX_CALLBACK_CLOCK_SKEW_MS, recognizeOrderNotification } from '@shared/domain/callbacks';
import type { PayoutIdentity } from '@shared/domain/identity';
import type { CallbackListing, EventLookup } from '@shared/ports/callbacks';

/*
 * The provider's signed order notifications as evidence at the decisions that rest on GetPayout's
 * "not found" (money-safety rule 1): the reconciler's end of the grace period, `payouts resolve
 * --as failed`, `payouts retry`. A notification never moves a payout (GetPayout decides), but an
 * authentic one naming the payout is the provider showing it knows the withdrawal_reference: "not
 * found" then is a lagging or lost record, never proof that nothing was paid. Only the events table
 * is read: it holds authentic notifications only (a bad signature or key is quarantined elsewhere
 * and never stored there), and its `by-reference` index lists them by the reference they name,
 * recognized or not.
 */

/** Where the notifications are read: the events table's by-reference listing, and each body by its id. */
export type NotificationStore = CallbackListing & EventLookup;

/** An authentic stored order notification naming a payout, as the decisions quote it. */
export interface PayoutNotice {
  readonly eventId: string;
  readonly receivedAt: string;
  /** `data.payment.status` (else the top-level status), bounded and inert (noticeWord). */
  readonly paymentStatus?: string;
  /** `data.order_details.status`, bounded and inert. */
  readonly orderStatus?: string;
}

/** What a look found: the matching notifications, newest first, and whether more were left unread. */
export interface PayoutNotices {
  readonly notices: readonly PayoutNotice[];
  /** The listing had more notifications naming the reference than NOTICES_EXAMINED: some were not checked. */
  readonly truncated: boolean;
}

/** At most this many notifications naming a reference are read (one Query page, one GetItem each). */
export const NOTICES_EXAMINED = 20;

/** Longest status word quoted. */
const WORD_MAX = 24;

/**
 * A status word of a notification as payrelay quotes it in a reason, a refusal or a listing: it is
 * the sender's text, so only letters, digits and `_ - .` are kept (anything else becomes `?`) and it
 * is clipped, so that it can neither forge a line of the history nor carry markup or control
 * characters into a terminal or a page.
 */
export function noticeWord(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const inert = value.replace(/[^A-Za-z0-9_.-]/g, '?');
  if (inert === '') return undefined;
  return inert.length > WORD_MAX ? `${inert.slice(0, WORD_MAX)}…` : inert;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Whether a notification's body, which names the reference, is about this payout: a body that also
 * gives the merchant or the currency (`data.platform_merchant_id`, `data.currency`,
 * `data.order_details.currency`) must give this payout's; one that gives only the reference (the
 * provider's public samples) is taken as about it, the side that never pays twice.
 */
function namesPayout(body: unknown, identity: PayoutIdentity): boolean {
  const data = isObject(body) && isObject(body.data) ? body.data : {};
  const details = isObject(data.order_details) ? data.order_details : {};
  const differs = (given: unknown, own: string): boolean => typeof given === 'string' && given.trim() !== '' && given.trim() !== own;
  return (
    !differs(data.platform_merchant_id, identity.platform_merchant_id) &&
    !differs(data.currency, identity.currency) &&
    !differs(details.currency, identity.currency)
  );
}

const parsed = (body: string): unknown => {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
};

/**
 * The authentic stored order notifications naming this payout, newest first: those listed under its
 * withdrawal_reference received since it was created (less the clock skew allowed a callback: a
 * notification about this payout cannot come before it), recognized again from the stored body,
 * whose merchant and currency, when the body gives them, are the payout's. One Query and at most
 * NOTICES_EXAMINED GetItems: called only where a decision rests on "not found", never per look.
 * @throws what the events table's read throws (a decision that needs the answer is not taken)
 */
export async function noticesNaming(events: NotificationStore, identity: PayoutIdentity, createdAt: string): Promise<PayoutNotices> {
  const receivedFrom = new Date(Date.parse(createdAt) - MAX_CALLBACK_CLOCK_SKEW_MS);
  const page = await events.listCallbacks({ reference: identity.withdrawal_reference, source: 'payout-notification', receivedFrom, limit: NOTICES_EXAMINED });
  const notices: PayoutNotice[] = [];
  for (const listed of page.events) {
    if (listed.source !== 'payout-notification') continue;
    const stored = await events.get(listed.eventId);
    // Gone meanwhile (its retention ended): nothing to weigh.
    if (stored === undefined) continue;
    const body = parsed(stored.body);
    const recognition = recognizeOrderNotification(body);
    // One payrelay does not recognize (an unknown status word, a new shape) is still the provider
    // naming the reference, which the receiver read from its body to list it here: it counts, with no
    // status words, since counting it can only stop a FAILED or a second Payout call, never cause one.
    const reference = recognition.recognized ? recognition.event.withdrawalReference : listed.withdrawalReference;
    if (reference !== identity.withdrawal_reference || !namesPayout(body, identity)) continue;
    const paymentStatus = recognition.recognized ? noticeWord(recognition.event.paymentStatus) : undefined;
    const orderStatus = recognition.recognized ? noticeWord(recognition.event.orderStatus) : undefined;
    notices.push({
      eventId: stored.eventId,
      receivedAt: stored.receivedAt,
      ...(paymentStatus !== undefined ? { paymentStatus } : {}),
      ...(orderStatus !== undefined ? { orderStatus } : {}),
    });
  }
  return { notices, truncated: page.cursor !== undefined };
}

/** A notice's status words: "payment PAID, order COMPLETED", or "no status words". */
export function noticeStatusText(notice: PayoutNotice): string {
  const words = [notice.paymentStatus && `payment ${notice.paymentStatus}`, notice.orderStatus && `order ${notice.orderStatus}`].filter(Boolean);
  return words.length > 0 ? words.join(', ') : 'no status words';
}

/**
 * The notifications as one clause of a reason or a refusal, with what they show: the newest with its
 * time and status words, and how many more ("... names it: the provider knows it"). When more were
 * listed than could be read and none of those read matched, the clause says they could not all be
 * checked, which is taken the safe way. Undefined when none counts (none found, and none left unread).
 */
export function describeNotices(found: PayoutNotices): string | undefined {
  const [newest, ...older] = found.notices;
  if (newest === undefined) {
    return found.truncated
      ? `more than ${NOTICES_EXAMINED} stored order notifications name this withdrawal_reference and could not all be checked: the provider may know it`
      : undefined;
  }
  const more = older.length > 0 || found.truncated ? ` and ${older.length}${found.truncated ? '+' : ''} more` : '';
  return `the provider's signed order notification received at ${newest.receivedAt} (${noticeStatusText(newest)})${more} names it: the provider knows it`;
}
