/**
 * The base of every domain error. Adapters map subclasses to an HTTP status or a batch failure in
 * one place; the message is safe to log (no secrets, no full account numbers) but is never sent
 * to a caller verbatim.
 */
export abstract class DomainError extends Error {
  abstract override name: string;
}

/** An amount that is not a positive decimal string valid for its currency. */
export class InvalidAmountError extends DomainError {
  override name = 'InvalidAmountError';
}

/** A currency code that is not in the currency table (see `registerCurrency`). */
export class UnsupportedCurrencyError extends DomainError {
  override name = 'UnsupportedCurrencyError';
}

/** An account_code that is neither a digit bank code nor a known mobile-money provider. */
export class InvalidAccountCodeError extends DomainError {
  override name = 'InvalidAccountCodeError';
}

/** A payout identity with an empty part, or a payout key that `payoutKey` could not have produced. */
export class InvalidPayoutIdentityError extends DomainError {
  override name = 'InvalidPayoutIdentityError';
}

/** Shortens untrusted input before it goes into an error message. */
export function preview(value: string, max = 40): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
