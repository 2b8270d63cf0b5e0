import { createHash, timingSafeEqual } from 'node:crypto';
import { preview } from './errors';
import { isWellFormedText } from './identity';
import { normalizeKycDecision, normalizeKycPhase, type KycDecision, type KycPhase } from './kyc-status';

/**
 * Shapes of the two callbacks payrelay receives, checked by hand (the domain imports no schema
 * library), and the dedupe key that makes storing a callback idempotent.
 */

/** Where a callback came from; the first part of its dedupe key. */
export const CALLBACK_SOURCES = ['kyc', 'payout-notification'] as const;
export type CallbackSource = (typeof CALLBACK_SOURCES)[number];

/** User data the KYC service sends with its second `applicantReviewed` post. */
export interface KycProfile {
  first_name?: string;
  last_name?: string;
  phone?: string;
  email?: string;
  country?: string;
}

/** A recognized KYC callback, normalized: the documented words mapped to phase and decision. */
export interface KycCallbackEvent {
  userReference: string;
  phase: KycPhase;
  /** `awaiting_approval` before completion; `approved` or `rejected` once completed. */
  decision: KycDecision;
  note?: string;
  /** The provider's event name, e.g. `applicantReviewed`. */
  event: string;
  orderId?: string;
  /** The provider's event time, ISO-8601 in UTC; empty when absent or unparseable. */
  occurredAt: string;
  profile?: KycProfile;
}

/** A recognized order notification: only what payrelay acts on; the body itself is stored verbatim. */
export interface OrderNotificationEvent {
  withdrawalReference: string;
  /** `data.payment.status` or the top-level status, as sent: a hint only, never an outcome. */
  paymentStatus?: string;
  orderStatus?: string;
  /** `data.payment.status` alone (never the top-level status, which says how the call went). */
  orderPaymentStatus?: string;
  /**
   * `data.order_details.partner_order_id` when the notification is not explicitly about a payout (it
   * has no `data.withdrawal_reference`): perhaps the order id of a collection payrelay created.
   */
  partnerOrderId?: string;
  /** `data.order_details.order_reference`: the provider's own reference of the order. */
  orderReference?: string;
}

/** Either the normalized event, or why the payload is not one payrelay understands. */
export type Recognition<T> = { recognized: true; event: T } | { recognized: false; reason: string };

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const nonEmptyString = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/**
 * Longest user_reference / withdrawal_reference accepted: the same bound as the payout request
 * (the worker looks KYC subjects up by the same reference), and it keeps every table key far below
 * DynamoDB's 2048-byte key limit. A longer one is unrecognized: stored, never applied.
 */
export const MAX_REFERENCE_LENGTH = 128;

/**
 * Why a reference cannot become part of a table key, or undefined when it can. A KYC order is
 * created only with a user reference its callbacks can be applied with (`createKycOrder`).
 */
export function referenceProblem(name: string, value: string): string | undefined {
  if (value.length > MAX_REFERENCE_LENGTH) return `${name} is longer than ${MAX_REFERENCE_LENGTH} characters`;
  if (!isWellFormedText(value)) return `${name} is not well-formed Unicode text (lone surrogate)`;
  return undefined;
}

/** Free text copied into a projection is clipped, so a subject item stays small whatever is sent. */
const MAX_TEXT_LENGTH = 1000;
const MAX_FIELD_LENGTH = 256;

const clipped = (value: unknown, max: number): string | undefined => nonEmptyString(value)?.slice(0, max);

/** A value quoted in a reason: short, whatever its size (reasons are logged and stored). */
const quoted = (value: unknown): string => preview(JSON.stringify(value) ?? String(value));

/** Why a field that must be a non-empty string is not one, without its value (it may be personal data). */
const missingOrWhy = (value: unknown): string => {
  if (value === undefined || value === null) return 'is missing';
  return typeof value === 'string' ? 'is empty' : 'must be a string';
};

/** Normalizes a timestamp to `Date.toISOString()` so events order by plain string comparison. */
export function normalizeTimestamp(value: unknown): string {
  const text = nonEmptyString(value);
  if (text === undefined) return '';
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString();
}

/**
 * How far after its receipt a callback's own time may lie (the two clocks' skew). A later time is not
 * believed: an answer dated in the future would outrank every real answer after it (an approval dated
 * 9999 would outrank a fraud rejection for good), so it counts as undated, which orders an approval
 * first and a rejection last (the safe direction).
 */
export const MAX_CALLBACK_CLOCK_SKEW_MS = 5 * 60_000;

/** The callback's own time, normalized, or '' (undated) when it is unreadable or too far after `receivedAt`. */
function believableTime(value: unknown, receivedAt: Date): string {
  const time = normalizeTimestamp(value);
  return time !== '' && Date.parse(time) > receivedAt.getTime() + MAX_CALLBACK_CLOCK_SKEW_MS ? '' : time;
}

const PROFILE_FIELDS = ['first_name', 'last_name', 'phone', 'email', 'country'] as const;

/** A reference read from a payload as the recognizers read it, or why there is none they would accept. */
type ReferenceRead = { reference: string } | { reason: string };

/**
 * A KYC payload's `user_reference` (top level), read as recognizeKycCallback reads it: a non-empty
 * string, trimmed, that referenceProblem accepts.
 */
function kycUserReference(payload: Json): ReferenceRead {
  const userReference = nonEmptyString(payload.user_reference);
  if (userReference === undefined) return { reason: `user_reference ${missingOrWhy(payload.user_reference)}` };
  const badReference = referenceProblem('user_reference', userReference);
  return badReference ? { reason: badReference } : { reference: userReference };
}

/**
 * The reference an order notification's `data` names, read as recognizeOrderNotification reads it:
 * `data.withdrawal_reference`, else `data.order_details.partner_order_id`, trimmed, that
 * referenceProblem accepts; with which of the two it was.
 */
function notificationReference(data: Json): { reference: string; payoutReference?: string; partnerOrderId?: string } | { reason: string } {
  const orderDetails = isObject(data.order_details) ? data.order_details : {};
  const partnerOrderId = nonEmptyString(orderDetails.partner_order_id);
  const payoutReference = nonEmptyString(data.withdrawal_reference);
  const reference = payoutReference ?? partnerOrderId;
  if (reference === undefined) return { reason: 'no data.withdrawal_reference or data.order_details.partner_order_id' };
  const badReference = referenceProblem('withdrawal reference', reference);
  return badReference ? { reason: badReference } : { reference, payoutReference, partnerOrderId };
}

/**
 * Characters a reference copied from an unrecognized body may not hold: controls (C0, DEL, C1),
 * invisible format characters (bidi overrides, zero-width ones) and the line and paragraph
 * separators. No reference payrelay hands out carries one, and in a listing they could only forge
 * or hide text.
 */
const NOT_SHOWN_AS_ITSELF = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

/** The listing attributes an unrecognized callback names: at most one of the two. */
export interface NamedReferences {
  userReference?: string;
  withdrawalReference?: string;
}

/**
 * The reference an authentic but unrecognized callback names, read from its already parsed body at
 * the place the recognizer reads it for a recognized one (a KYC callback's top-level
 * `user_reference`; a notification's `data.withdrawal_reference`, else
 * `data.order_details.partner_order_id`), so the operator can find it by the user or payout it is
 * about (`events list --reference`, `kyc status`). The same rules as a recognized reference (a
 * non-empty string, trimmed, at most MAX_REFERENCE_LENGTH characters, well-formed), and stricter:
 * nothing vouches for the rest of the body, so a reference with a control or invisible character
 * is left out rather than listed. Only a label for listings: nothing is ever applied by it (the
 * applier and replay recognize the stored body again). A few property reads, no copy of the body:
 * it runs on the receivers' hot path.
 */
export function referencesOfUnrecognized(source: CallbackSource, payload: unknown): NamedReferences {
  if (!isObject(payload)) return {};
  if (source === 'kyc') {
    const read = kycUserReference(payload);
    return 'reference' in read && !NOT_SHOWN_AS_ITSELF.test(read.reference) ? { userReference: read.reference } : {};
  }
  if (!isObject(payload.data)) return {};
  const read = notificationReference(payload.data);
  return 'reference' in read && !NOT_SHOWN_AS_ITSELF.test(read.reference) ? { withdrawalReference: read.reference } : {};
}

/**
 * Reads a KYC callback payload ("Callback payload" in the KYC service's documentation). It needs a user reference and a
 * known status word; a completed callback also needs a final decision (approved or rejected).
 * Anything else is unrecognized: stored and acknowledged by the caller, never applied.
 */
export function recognizeKycCallback(payload: unknown, receivedAt: Date): Recognition<KycCallbackEvent> {
  if (!isObject(payload)) return { recognized: false, reason: 'payload is not a JSON object' };
  const read = kycUserReference(payload);
  if ('reason' in read) return { recognized: false, reason: read.reason };
  const userReference = read.reference;
  const statusWord = nonEmptyString(payload.status);
  const phase = statusWord === undefined ? undefined : normalizeKycPhase(statusWord);
  if (phase === undefined) {
    return { recognized: false, reason: typeof payload.status === 'string' ? `unknown status ${quoted(payload.status)}` : `status ${missingOrWhy(payload.status)}` };
  }

  const meta = isObject(payload.meta_data) ? payload.meta_data : {};
  const decisionWord = nonEmptyString(meta.kyc_status);
  const stated = decisionWord === undefined ? undefined : normalizeKycDecision(decisionWord);
  if (decisionWord !== undefined && stated === undefined) {
    return { recognized: false, reason: `unknown kyc_status ${quoted(meta.kyc_status)}` };
  }
  let decision: KycDecision;
  if (phase === 'completed') {
    if (stated !== 'approved' && stated !== 'rejected') {
      return { recognized: false, reason: 'a completed callback carries no approved or rejected kyc_status' };
    }
    decision = stated;
  } else {
    // Before completion the only meaningful answer is "waiting"; a stray final word is not trusted.
    decision = 'awaiting_approval';
  }

  const profile: KycProfile = {};
  for (const field of PROFILE_FIELDS) {
    const value = clipped(payload[field], MAX_FIELD_LENGTH);
    if (value !== undefined) profile[field] = value;
  }

  return {
    recognized: true,
    event: {
      userReference,
      phase,
      decision,
      note: clipped(meta.kyc_note, MAX_TEXT_LENGTH),
      event: clipped(payload.event, MAX_FIELD_LENGTH) ?? '',
      orderId: clipped(payload.order, MAX_FIELD_LENGTH),
      occurredAt: believableTime(payload.timestamp, receivedAt),
      profile: Object.keys(profile).length > 0 ? profile : undefined,
    },
  };
}

/**
 * Finds the payout or the collection a notification is about. The provider's documentation shows no notification
 * payload; the simulator sends `data.withdrawal_reference`, and the provider's public samples carry
 * the partner's own reference in `data.order_details.partner_order_id`. Both are accepted for a
 * payout, in that order; a collection only by `partner_order_id`, in a notification without
 * `data.withdrawal_reference` (so a payout notification costs no collection look-up).
 */
export function recognizeOrderNotification(payload: unknown): Recognition<OrderNotificationEvent> {
  if (!isObject(payload)) return { recognized: false, reason: 'payload is not a JSON object' };
  const data = isObject(payload.data) ? payload.data : undefined;
  if (data === undefined) return { recognized: false, reason: 'data is missing' };
  const orderDetails = isObject(data.order_details) ? data.order_details : {};
  const payment = isObject(data.payment) ? data.payment : {};
  const read = notificationReference(data);
  if ('reason' in read) return { recognized: false, reason: read.reason };
  const { reference: withdrawalReference, payoutReference, partnerOrderId } = read;
  return {
    recognized: true,
    event: {
      withdrawalReference,
      paymentStatus: clipped(payment.status, MAX_FIELD_LENGTH) ?? clipped(payload.status, MAX_FIELD_LENGTH),
      orderStatus: clipped(orderDetails.status, MAX_FIELD_LENGTH),
      orderPaymentStatus: clipped(payment.status, MAX_FIELD_LENGTH),
      partnerOrderId: payoutReference === undefined ? partnerOrderId : undefined,
      orderReference: clipped(orderDetails.order_reference, MAX_FIELD_LENGTH),
    },
  };
}

/**
 * JSON with object keys sorted at every level and no whitespace: two deliveries of the same content
 * (whatever the key order or spacing) give the same text.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `<source>#<sha256 hex of the canonical body>`: the events table key, so a redelivery collides. */
export function dedupeKey(source: CallbackSource, payload: unknown): string {
  return `${source}#${createHash('sha256').update(canonicalJson(payload)).digest('hex')}`;
}

/**
 * Compares a presented secret with the expected one in constant time: both are hashed first, so
 * neither the content nor the length of the expected value leaks through timing.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * The reference a stored callback names, the key of "the callbacks that named it": an order
 * notification's withdrawal reference, a KYC callback's user reference; undefined when it names none.
 */
export function referenceNamedBy(event: { source: CallbackSource; userReference?: string; withdrawalReference?: string }): string | undefined {
  return event.source === 'kyc' ? event.userReference : event.withdrawalReference;
}

/** `YYYY-MM-DD` (UTC) of a time: the day part of the events table's time-index partitions. */
export function receivedDayOf(time: Date): string {
  return time.toISOString().slice(0, 10);
}

/** Retention of stored events, from EVENT_RETENTION_DAYS; becomes the item's TTL. */
export function expiresAtFor(receivedAt: Date, retentionDays: number): number {
  return Math.floor(receivedAt.getTime() / 1000) + retentionDays * 86_400;
}
