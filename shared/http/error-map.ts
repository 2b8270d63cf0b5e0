import { SecretFormatError, SecretNotConfiguredError } from '@shared/adapters/secrets';
import { MalformedWebhookError, WebhookUnauthorizedError } from '@shared/domain/errors';
import {
  MalformedJsonError,
  PayloadTooLargeError,
  SourceNotAllowedError,
  UndecodableBodyError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
} from './request-errors';

/** What the caller is told about a refused request: a status and a message that leaks nothing. */
export interface HttpRefusal {
  statusCode: number;
  /** Short machine-readable code, e.g. `payload_too_large`. */
  code: string;
  /** Safe to send: never a secret, a stack or the expected value. */
  message: string;
}

/**
 * The one place named errors become HTTP statuses. Anything not listed is an internal failure
 * (storage down, a bug): 500 with a generic message, so the provider retries and nothing leaks.
 */
export function toHttpRefusal(error: unknown): HttpRefusal {
  if (error instanceof PayloadTooLargeError) return { statusCode: 413, code: 'payload_too_large', message: error.message };
  if (error instanceof UnsupportedMediaTypeError) return { statusCode: 415, code: 'unsupported_media_type', message: error.message };
  if (error instanceof UnsupportedContentEncodingError) return { statusCode: 415, code: 'unsupported_content_encoding', message: error.message };
  if (error instanceof UndecodableBodyError) return { statusCode: 400, code: 'undecodable_body', message: error.message };
  if (error instanceof MalformedJsonError) return { statusCode: 400, code: 'malformed_json', message: error.message };
  if (error instanceof MalformedWebhookError) return { statusCode: 400, code: 'malformed_payload', message: error.message };
  // Which check failed (token, key, signature) is logged, never told to a possibly hostile caller.
  if (error instanceof WebhookUnauthorizedError) return { statusCode: 401, code: 'unauthorized', message: 'unauthorized' };
  if (error instanceof SourceNotAllowedError) return { statusCode: 403, code: 'forbidden', message: 'source address not allowed' };
  // A secret still empty after the deploy: the operator has to act; the provider should retry later.
  if (error instanceof SecretNotConfiguredError || error instanceof SecretFormatError) {
    return { statusCode: 503, code: 'not_configured', message: 'payrelay is not configured yet; retry later' };
  }
  return { statusCode: 500, code: 'internal_error', message: 'internal error; the callback was not accepted, retry later' };
}
