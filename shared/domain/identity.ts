import { InvalidPayoutIdentityError, preview } from './errors';

export { InvalidPayoutIdentityError } from './errors';

/** The provider's identity of a payout: at most one Payout call per identity (money-safety rule 1). */
export interface PayoutIdentity {
  platform_merchant_id: string;
  currency: string;
  withdrawal_reference: string;
}

const SEPARATOR = '|';

/**
 * A stable, unambiguous string key for a payout identity: each part URI-encoded (so '|' inside a
 * part becomes %7C), joined by '|'. Used as the payouts table partition key.
 * @throws InvalidPayoutIdentityError when a part is empty.
 */
export function payoutKey(id: PayoutIdentity): string {
  const parts = [id.platform_merchant_id, id.currency, id.withdrawal_reference];
  if (parts.some((part) => typeof part !== 'string' || part.length === 0)) {
    throw new InvalidPayoutIdentityError('platform_merchant_id, currency and withdrawal_reference must be non-empty strings');
  }
  return parts.map(encodeURIComponent).join(SEPARATOR);
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
