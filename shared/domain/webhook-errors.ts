import { DomainError } from './errors';

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
