/**
 * The base of every domain error. Adapters map subclasses to an HTTP status or a batch failure in
 * one place; the message is safe to log (no secrets, no full account numbers) but is never sent
 * to a caller verbatim.
 */
export abstract class DomainError extends Error {
  abstract override name: string;
}

/**
 * A setting whose value cannot be used: an environment variable, a key of a stage's configuration, a
 * CLI flag. The message says what is wrong with the value and never names the setting, because the
 * same value arrives under different names (`PAYOUT_DEFINITE_REFUSALS`, `settings.payoutDefiniteRefusals`):
 * whoever read it names it, once (`loadConfig` for a variable, the stage validation for a key).
 */
export abstract class SettingError extends DomainError {}

/** An amount that is not a positive decimal string valid for its currency. */
export class InvalidAmountError extends DomainError {
  override name = 'InvalidAmountError';
}

/** A currency code that is not in the currency table (see `registerCurrency`). */
export class UnsupportedCurrencyError extends DomainError {
  override name = 'UnsupportedCurrencyError';
}

/** A phone number that is not in international (E.164) form; the message never quotes the number. */
export class InvalidPhoneNumberError extends DomainError {
  override name = 'InvalidPhoneNumberError';
}

/** An account_code that is neither a digit bank code nor a known mobile-money provider. */
export class InvalidAccountCodeError extends DomainError {
  override name = 'InvalidAccountCodeError';
}

/** A payout identity with an empty part, or a payout key that `payoutKey` could not have produced. */
export class InvalidPayoutIdentityError extends DomainError {
  override name = 'InvalidPayoutIdentityError';
}

/** Why a callback was refused as unauthenticated; logged and counted, never sent to the caller. */
export type UnauthorizedReason = 'token' | 'signature' | 'authorization-header';

/**
 * A callback whose token, signature or Authorization key does not match: 401, nothing stored.
 * The message is safe to log (it never carries the presented or the expected value).
 */
export class WebhookUnauthorizedError extends DomainError {
  override name = 'WebhookUnauthorizedError';
  constructor(readonly reason: UnauthorizedReason, message: string) {
    super(message);
  }
}

/** A callback that cannot even be checked (e.g. a signed notification that is not a JSON object): 400. */
export class MalformedWebhookError extends DomainError {
  override name = 'MalformedWebhookError';
}

/**
 * The KYC service's `GET /responses` answer is not a list of callbacks payrelay can read (the provider's documentation
 * does not document its shape; see `readKycResponses`). Nothing of the answer is stored.
 */
export class KycResponsesFormatError extends DomainError {
  override name = 'KycResponsesFormatError';
}

/**
 * The payout was changed by someone else since it was read (a lost conditional write): reload and
 * decide again. Repositories throw it; the use cases catch it.
 */
export class ConcurrentModificationError extends Error {
  override name = 'ConcurrentModificationError';
}

/**
 * What a refused listing cursor was handed out for, when the cursor says so and it is not the listing
 * it was given to: a listing of payouts in another state, or one of the same state over another range.
 */
export type ForeignCursor = { readonly kind: 'state'; readonly cursorState: string; readonly listedState: string } | { readonly kind: 'range' };

/** A listing cursor that the repository did not hand out (or that was altered). */
export class InvalidListCursorError extends Error {
  override name = 'InvalidListCursorError';
  constructor(readonly foreign?: ForeignCursor) {
    super(
      foreign?.kind === 'state'
        ? `the cursor belongs to the listing of ${foreign.cursorState} payouts, not of ${foreign.listedState} ones; start again without it`
        : foreign?.kind === 'range'
          ? 'the cursor belongs to this listing over another time range; start again without it'
          : 'the cursor is not one this listing handed out; start again without it',
    );
  }
}

/** Shortens untrusted input before it goes into an error message. */
export function preview(value: string, max = 40): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}
