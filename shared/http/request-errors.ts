/** Transport-level rejections of a webhook request, raised before any use case runs. */

/** The body is over WEBHOOK_MAX_BODY_BYTES: 413. */
export class PayloadTooLargeError extends Error {
  override name = 'PayloadTooLargeError';
}

/** The Content-Type says the body is not JSON: 415. */
export class UnsupportedMediaTypeError extends Error {
  override name = 'UnsupportedMediaTypeError';
}

/** The body is empty or not valid JSON: 400, with the parser's reason. */
export class MalformedJsonError extends Error {
  override name = 'MalformedJsonError';
}

/** The source address is not on WEBHOOK_ALLOWED_IPS: 403. */
export class SourceNotAllowedError extends Error {
  override name = 'SourceNotAllowedError';
}

/** The Content-Encoding is not one the receiver can decode (gzip, deflate, br, identity): 415. */
export class UnsupportedContentEncodingError extends Error {
  override name = 'UnsupportedContentEncodingError';
}

/** The body is not valid data of its stated Content-Encoding: 400. */
export class UndecodableBodyError extends Error {
  override name = 'UndecodableBodyError';
}
