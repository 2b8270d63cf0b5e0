import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { WebhookReceipt } from '@shared/ports/callbacks';
import { WebhookUnauthorizedError } from '@shared/domain/errors';
import { logger } from '@shared/observability/logger';
import { metrics, MetricUnit } from '@shared/observability/metrics';
import { invocationTracing } from '@shared/observability/tracer';
import { METRIC } from '@shared/observability/metric-names';
import type { SourceAllowList } from '@shared/config/webhook';
import { decodeContent, withoutByteOrderMark } from './body-decoding';
import { toHttpRefusal } from './error-map';
import { MalformedJsonError, PayloadTooLargeError, SourceNotAllowedError, UnsupportedMediaTypeError } from './request-errors';

/** The request as the guard hands it to a handler: the verbatim body text and its JSON parse. */
export interface ParsedWebhook {
  body: string;
  payload: unknown;
  sourceIp?: string;
}

/** An HTTP API v2 event; `webhook` is set by {@link webhookGuard} before the handler runs. */
export type WebhookEvent = APIGatewayProxyEventV2 & { webhook?: ParsedWebhook };

/** Thrown when a handler reads the parsed body without the guard in front of it: a wiring bug. */
export class WebhookGuardMissingError extends Error {
  override name = 'WebhookGuardMissingError';
}

/** The guard's parse of the request; only a handler behind {@link webhookGuard} may call it. */
export function webhookOf(event: WebhookEvent): ParsedWebhook {
  if (event.webhook === undefined) throw new WebhookGuardMissingError('webhookGuard must run before the handler');
  return event.webhook;
}

export interface WebhookGuardOptions {
  maxBodyBytes: number;
  allowList?: SourceAllowList;
}

/** A JSON response in HTTP API v2 form. */
export function jsonResponse(statusCode: number, body: object): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** The 200 every authentic callback gets, new or duplicate, recognized or not. */
export function acknowledge(receipt: WebhookReceipt): APIGatewayProxyStructuredResultV2 {
  return jsonResponse(200, { received: true, duplicate: receipt.outcome === 'duplicate', eventId: receipt.eventId });
}

/** True for `application/json` and `application/<anything>+json`, parameters (charset) ignored. */
function isJsonContentType(value: string): boolean {
  const type = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** Header value of `name` (lower case); HTTP API v2 lower-cases names, hand-built events may not. */
export function requestHeader(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const entry = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return entry?.[1];
}

/** Deepest JSON nesting accepted; real callbacks are 3 levels deep, and deeper input only costs stack. */
export const MAX_JSON_DEPTH = 64;

/**
 * Nesting depth of JSON text, by one pass over its characters (no recursion, so no input can
 * overflow the stack). Brackets inside strings do not count.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i += 1; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, (depth += 1));
    else if (c === 0x7d || c === 0x5d) depth -= 1;
  }
  return deepest;
}

/** The parser's reason without the input it quotes (callback bodies may carry personal data). */
function jsonReason(error: unknown): string {
  return (error as Error).message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').slice(0, 160);
}

/**
 * The receivers' middy middleware. Before the handler: source allow-list (403), body size (413),
 * Content-Type (415; a missing one is tolerated and the body must then parse), Content-Encoding
 * (gzip, deflate, br decoded up to the size limit: 413 beyond it, 415 for another coding, 400 for
 * corrupt data), a leading UTF-8 byte order mark dropped, JSON (400 with
 * the reason; also for nesting deeper than {@link MAX_JSON_DEPTH}). On error: maps the named error
 * to its status in one place (error-map), writes one log line per refusal saying what happened,
 * counts 401s, and never sends a stack or a raw error.
 */
export function webhookGuard(options: WebhookGuardOptions): MiddlewareObj<WebhookEvent, APIGatewayProxyStructuredResultV2> {
  return {
    before: (request) => {
      const event = request.event;
      const sourceIp = event.requestContext?.http?.sourceIp;
      if (options.allowList !== undefined && !options.allowList(sourceIp ?? '')) {
        throw new SourceNotAllowedError(`source address ${sourceIp ?? '(none)'} is not on WEBHOOK_ALLOWED_IPS`);
      }
      const raw = event.body ?? '';
      const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
      if (bytes.length > options.maxBodyBytes) {
        throw new PayloadTooLargeError(`body is ${bytes.length} bytes; the limit is ${options.maxBodyBytes}`);
      }
      const contentType = requestHeader(event, 'content-type');
      if (contentType !== undefined && !isJsonContentType(contentType)) {
        const type = (contentType.split(';')[0] ?? '').trim().slice(0, 80);
        throw new UnsupportedMediaTypeError(`content-type ${type} is not JSON; send application/json`);
      }
      const body = withoutByteOrderMark(
        decodeContent(bytes, requestHeader(event, 'content-encoding'), options.maxBodyBytes).toString('utf8'),
      );
      if (body.trim() === '') throw new MalformedJsonError('body is empty; a JSON object is expected');
      if (jsonDepth(body) > MAX_JSON_DEPTH) {
        throw new MalformedJsonError(`body is nested deeper than ${MAX_JSON_DEPTH} levels`);
      }
      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch (error) {
        throw new MalformedJsonError(`body is not valid JSON: ${jsonReason(error)}`);
      }
      event.webhook = { body, payload, sourceIp };
    },
    onError: (request) => {
      const error = request.error;
      const refusal = toHttpRefusal(error);
      const logKeys = {
        route: request.event.routeKey,
        statusCode: refusal.statusCode,
        error: error?.name,
        sourceIp: request.event.requestContext?.http?.sourceIp,
      };
      if (refusal.code === 'not_configured') {
        logger.error('secret not configured; answered 503 so the provider retries later', { ...logKeys, reason: error?.message });
      } else if (refusal.statusCode >= 500) {
        logger.error('webhook failed; answered 500 so the provider retries', { ...logKeys, error });
      } else {
        logger.warn('webhook refused', {
          ...logKeys,
          reason: error?.message,
          check: error instanceof WebhookUnauthorizedError ? error.reason : undefined,
        });
      }
      if (refusal.statusCode === 401) metrics.addMetric(METRIC.webhookUnauthorized, MetricUnit.Count, 1);
      // Set, not returned: returning would skip the later onError middlewares (metrics flush).
      request.response = jsonResponse(refusal.statusCode, { error: refusal.code, message: refusal.message });
    },
  };
}

/**
 * The one shape of a webhook Lambda: traced (outermost; the answer is not copied into the trace),
 * logger context and metrics flush, then the guard (allow-list,
 * size, content type, JSON), then the route's use case, whose receipt becomes the 200 answer.
 * Anything the guard or the use case refuses is mapped to its status by the guard.
 */
export function webhookHandler(
  settings: { WEBHOOK_MAX_BODY_BYTES: number; WEBHOOK_ALLOWED_IPS: SourceAllowList | undefined },
  receive: (event: WebhookEvent, webhook: ParsedWebhook) => Promise<WebhookReceipt>,
) {
  return middy<WebhookEvent, APIGatewayProxyStructuredResultV2>()
    .use(invocationTracing())
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics))
    .use(webhookGuard({ maxBodyBytes: settings.WEBHOOK_MAX_BODY_BYTES, allowList: settings.WEBHOOK_ALLOWED_IPS }))
    .handler(async (event) => acknowledge(await receive(event, webhookOf(event))));
}
