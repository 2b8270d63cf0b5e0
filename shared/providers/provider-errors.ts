import { maskAccount } from '@shared/domain/account';

/** Operations of both provider clients, as they appear in errors and logs. */
export type ProviderOperation =
  | 'onboardPartner'
  | 'resetPartnerKeys'
  | 'verifyAccount'
  | 'payout'
  | 'getPayout'
  | 'createCollectionOrder'
  | 'registerApp'
  | 'verifyApp'
  | 'requestToken'
  | 'getKycTypes'
  | 'createIndividualOrder'
  | 'createBusinessOrder'
  | 'getResponses'
  | 'getVerificationStatus'
  | 'getUserStatus';

/** The four failure classes; each tells the caller what is safe to do next (see docs/signing.md). */
export type ProviderFailureKind = 'rejected' | 'unauthorized' | 'unavailable' | 'ambiguous';

interface ProviderErrorDetails {
  httpStatus?: number;
  providerMessage?: string;
  /** Node's network error code (ECONNREFUSED, ECONNRESET...) or PROVIDER_TIMEOUT. */
  code?: string;
  /** From a Retry-After header on a 429 or 503: how long to wait before asking again (capped). */
  retryAfterMs?: number;
}

/**
 * Base of every provider failure. Messages and `providerMessage` are redacted: no secrets, no
 * full account numbers, so they are safe to log. Never send them to a caller verbatim.
 */
export abstract class ProviderError extends Error {
  abstract readonly kind: ProviderFailureKind;
  readonly operation: ProviderOperation;
  readonly httpStatus?: number;
  readonly providerMessage?: string;
  readonly code?: string;
  /** How long the provider asked us to wait (Retry-After on a 429 or 503), capped at 15 minutes. */
  readonly retryAfterMs?: number;

  constructor(operation: ProviderOperation, message: string, details: ProviderErrorDetails = {}) {
    super(`${operation}: ${message}`);
    this.operation = operation;
    this.httpStatus = details.httpStatus;
    this.providerMessage = details.providerMessage;
    this.code = details.code;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** The provider definitely refused (a 4xx with a body, or success:false). Nothing was done. */
export class ProviderRejectedError extends ProviderError {
  override name = 'ProviderRejectedError';
  readonly kind = 'rejected' as const;
  /** The refusal is about a withdrawal_reference that already exists: the earlier payout's fate is unknown here. */
  readonly duplicateReference: boolean;

  constructor(operation: ProviderOperation, message: string, details: ProviderErrorDetails & { duplicateReference: boolean }) {
    super(operation, message, details);
    this.duplicateReference = details.duplicateReference;
  }
}

/** 401 or 403: the keys may have been reset. Refresh the secret once and try again. */
export class ProviderUnauthorizedError extends ProviderError {
  override name = 'ProviderUnauthorizedError';
  readonly kind = 'unauthorized' as const;
}

/** Nothing reached the provider (DNS failure, connection refused, connect time-out): a retry is safe. */
export class ProviderUnavailableError extends ProviderError {
  override name = 'ProviderUnavailableError';
  readonly kind = 'unavailable' as const;
}

/** The request was sent but no definite answer came back (time-out, reset, 5xx, unreadable body). Never retry blind. */
export class ProviderAmbiguousError extends ProviderError {
  override name = 'ProviderAmbiguousError';
  readonly kind = 'ambiguous' as const;
}

// Long digit runs in provider text are most likely account or phone numbers.
const DIGIT_RUN = /\d{7,}/g;
const MAX_PROVIDER_MESSAGE = 300;

/**
 * Makes provider-supplied text safe for errors and logs: known sensitive values (keys, the account
 * number of the request) become "[redacted]" or their mask, remaining long digit runs are masked,
 * and the text is shortened.
 */
export function redact(text: string, sensitive: readonly string[] = []): string {
  let safe = text;
  for (const value of sensitive) {
    if (value.length >= 4) {
      safe = safe.split(value).join(/^\d+$/.test(value) ? maskAccount(value) : '[redacted]');
    }
  }
  safe = safe.replace(DIGIT_RUN, (run) => maskAccount(run));
  return safe.length > MAX_PROVIDER_MESSAGE ? `${safe.slice(0, MAX_PROVIDER_MESSAGE)}…` : safe;
}
