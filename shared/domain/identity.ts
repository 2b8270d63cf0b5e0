import { InvalidPayoutIdentityError, preview } from './errors';

export { InvalidPayoutIdentityError } from './errors';

/** The provider's identity of a payout: at most one Payout call per identity (money-safety rule 1). */
export interface PayoutIdentity {
  platform_merchant_id: string;
  currency: string;
  withdrawal_reference: string;
}

const SEPARATOR = '|';

/** A UTF-16 surrogate without its partner: valid in a JS string (and in JSON text), not in UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a string is well-formed Unicode, so it has one UTF-8 form and can be URI-encoded. A lone
 * surrogate cannot be stored as it was sent; replacing it would let two different references share
 * one key, so references carrying one are refused instead.
 */
export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** DynamoDB's limit on a partition key value, in bytes. */
const MAX_KEY_BYTES = 2048;

/**
 * A stable, unambiguous string key for a payout identity: each part URI-encoded (so '|' inside a
 * part becomes %7C), joined by '|'. Used as the payouts table partition key.
 * @throws InvalidPayoutIdentityError when a part is empty or not well-formed text, or the key is too long.
 */
export function payoutKey(id: PayoutIdentity): string {
  const parts = [id.platform_merchant_id, id.currency, id.withdrawal_reference];
  if (parts.some((part) => typeof part !== 'string' || part.length === 0)) {
    throw new InvalidPayoutIdentityError('platform_merchant_id, currency and withdrawal_reference must be non-empty strings');
  }
  if (!parts.every(isWellFormedText)) {
    throw new InvalidPayoutIdentityError('platform_merchant_id, currency and withdrawal_reference must be well-formed Unicode text');
  }
  const key = parts.map(encodeURIComponent).join(SEPARATOR);
  if (key.length > MAX_KEY_BYTES) {
    // Encoded keys are ASCII, so characters are bytes.
    throw new InvalidPayoutIdentityError(`the payout identity is too long for a key (${key.length} bytes encoded; at most ${MAX_KEY_BYTES})`);
  }
  return key;
}

/**
 * The inverse of `payoutKey`. Accepts only keys `payoutKey` would produce, so one identity has
 * exactly one key.
 * @throws InvalidPayoutIdentityError
 */
export function parsePayoutKey(key: string): PayoutIdentity {
  const parts = key.split(SEPARATOR);
  if (parts.length !== 3) {
    throw new InvalidPayoutIdentityError(`payout key "${preview(key)}" does not have three parts`);
  }
  let decoded: string[];
  try {
    decoded = parts.map(decodeURIComponent);
  } catch {
    throw new InvalidPayoutIdentityError(`payout key "${preview(key)}" has an invalid escape`);
  }
  const [platform_merchant_id = '', currency = '', withdrawal_reference = ''] = decoded;
  const identity = { platform_merchant_id, currency, withdrawal_reference };
  if (payoutKey(identity) !== key) {
    throw new InvalidPayoutIdentityError(`payout key "${preview(key)}" is not in canonical form`);
  }
  return identity;
}
