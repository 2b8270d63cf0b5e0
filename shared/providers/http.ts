import http from 'node:http';
import https from 'node:https';
import {
  ProviderAmbiguousError,
  ProviderRejectedError,
  ProviderUnauthorizedError,
  ProviderUnavailableError,
  redact,
  type ProviderOperation,
} from './provider-errors';
import type { Tracing } from '@shared/ports/runtime';
import { parseRetryAfter } from './retry-after';

/** Settings shared by both provider clients. */
export interface TransportOptions {
  baseUrl: string;
  /** How long a call may take before it fails (Ambiguous once the request was sent); 10 s when absent. */
  timeoutMs?: number;
  /** Reuse connections between calls; on when absent. */
  keepAlive?: boolean;
  /** Each call becomes a span named by its operation (X-Ray in the deployed functions); none when absent. */
  tracing?: Tracing;
}

export interface TransportRequest {
  operation: ProviderOperation;
  method: 'GET' | 'POST';
  /** Path as in the provider's documentation, appended to the base URL as is (trailing slashes matter). */
  path: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: object;
  /** Values that must never appear in an error message (keys, the account number). */
  sensitive?: readonly string[];
}

export interface TransportResponse {
  status: number;
  text: string;
  /** The Retry-After header, if the answer had one. */
  retryAfter?: string;
}

const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * One HTTP exchange with a provider, with the failure classification money safety depends on.
 * Failures before the request was fully handed to the network ('finish' not yet emitted: DNS,
 * refused, connect time-out) are Unavailable, since a partial request cannot be acted upon. Any
 * failure after it (time-out, reset, truncated answer) is Ambiguous.
 */
export class HttpTransport {
  private readonly agent: http.Agent;
  private readonly baseUrl: URL;
  private readonly timeoutMs: number;
  private readonly tracing: Tracing | undefined;

  constructor(options: TransportOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`provider base URL is not a URL: ${options.baseUrl}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`provider base URL must be http(s), got ${base.protocol}`);
    }
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
      throw new TypeError('provider timeoutMs must be a positive integer');
    }
    this.baseUrl = base;
    this.timeoutMs = timeoutMs;
    this.tracing = options.tracing;
    const agentOptions = { keepAlive: options.keepAlive ?? true, maxSockets: 50 };
    this.agent = base.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  }

  /**
   * Sends the request and reads its answer with `read` (the client's classification), as one span
   * named by the operation when tracing is set, so a failure of either shows on that span.
   */
  call<T>(request: TransportRequest, read: (response: TransportResponse) => T): Promise<T> {
    const exchange = async (): Promise<T> => read(await this.send(request));
    return this.tracing ? this.tracing.span(request.operation, exchange) : exchange();
  }

  /** Closes pooled keep-alive sockets. */
  close(): void {
    this.agent.destroy();
  }

  /** The absolute URL of a documented path under the base URL (a base path prefix is kept). */
  url(path: string, query?: Record<string, string>): URL {
    const url = new URL(this.baseUrl.href.replace(/\/+$/, '') + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      url.searchParams.append(name, value);
    }
    return url;
  }

  /**
   * Sends the request and resolves with any HTTP answer (status + text).
   * @throws ProviderUnavailableError, ProviderAmbiguousError
   */
  send(request: TransportRequest): Promise<TransportResponse> {
    const { operation, sensitive = [] } = request;
    const url = this.url(request.path, request.query);
    const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body), 'utf8');
    const headers: Record<string, string> = { Accept: 'application/json', ...request.headers };
    if (payload) {
      headers['Content-Length'] = String(payload.length);
    }
    const transport = url.protocol === 'https:' ? https : http;

    return new Promise<TransportResponse>((resolve, reject) => {
      let sent = false;
      let settled = false;
      const fail = (error: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        reject(error);
      };
      const networkFailure = (code: string, detail: string): Error =>
        sent
          ? new ProviderAmbiguousError(operation, `request sent but no answer (${detail}); the provider may have acted on it`, { code })
          : new ProviderUnavailableError(operation, `request did not reach the provider (${detail}); safe to retry`, { code });

      const req = transport.request(url, { method: request.method, headers, agent: this.agent });
      const timer = setTimeout(() => {
        fail(networkFailure('PROVIDER_TIMEOUT', `no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);

      req.on('finish', () => {
        sent = true;
      });
      req.on('error', (error: NodeJS.ErrnoException) => {
        const code = error.code ?? 'UNKNOWN';
        fail(networkFailure(code, redact(`${code}: ${error.message}`, sensitive)));
      });
      req.on('response', (res) => {
        // A response can arrive before 'finish' only if the server answered early; either way it was sent.
        sent = true;
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            fail(new ProviderAmbiguousError(operation, `answer larger than ${MAX_RESPONSE_BYTES} bytes`, { httpStatus: res.statusCode }));
            return;
          }
          chunks.push(chunk);
        });
        res.on('aborted', () => fail(networkFailure('ECONNRESET', 'answer cut off')));
        res.on('error', (error: NodeJS.ErrnoException) => fail(networkFailure(error.code ?? 'UNKNOWN', 'answer cut off')));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
          });
        });
      });
      req.end(payload);
    });
  }
}

/** The provider's human message in a JSON body, if any (`message`, or `error` when it is a string). */
export function messageOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  if (typeof record.message === 'string') return record.message;
  if (typeof record.error === 'string') return record.error;
  return undefined;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * A refusal whose words say the provider already holds this reference ("duplicate", "reference has
 * been used", "already in use"). Only a hint, and a one-sided one: a payout refused this way counts as
 * acknowledged, so a later "not found" never makes it FAILED or authorizes a second call; it goes to a
 * person instead. Matching too much costs review work; matching too little could cost a double payout.
 */
const DUPLICATE = /duplicate|already (exists|in use|used|processed|been used)|\b(has|have|had|was|were) (already )?been used|\b(is|was) (already )?in use/i;

/**
 * Turns an HTTP answer into a parsed JSON body or one of the four failure classes:
 * 401/403 Unauthorized; 5xx, 408, 429, 1xx/3xx and a 4xx without a JSON body (empty, an HTML
 * page) Ambiguous; any other 4xx Rejected (409 or a "duplicate" message sets duplicateReference,
 * a hint only: payrelay settles every Payout refusal through GetPayout); 2xx unparseable Ambiguous;
 * 2xx with `success: false` Rejected. Statuses in `passthrough` are returned parsed (or as
 * undefined when empty) for the caller to interpret.
 */
export function interpretResponse(
  response: TransportResponse,
  operation: ProviderOperation,
  sensitive: readonly string[],
  passthrough: readonly number[] = [],
): { status: number; body: unknown } {
  const { status, text } = response;
  const parsed = text.trim() === '' ? undefined : parseJson(text);
  const body = parsed?.ok ? parsed.value : undefined;
  const rawMessage = messageOf(body) ?? (parsed && !parsed.ok ? text : undefined);
  const providerMessage = rawMessage === undefined ? undefined : redact(rawMessage, sensitive);
  // A rate limit or an outage may say when to come back; honoured on 429 and 503 only.
  const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(response.retryAfter, new Date()) : undefined;
  const details = { httpStatus: status, providerMessage, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  const said = providerMessage ? `: ${providerMessage}` : '';

  if (passthrough.includes(status) && (parsed === undefined || parsed.ok)) {
    return { status, body };
  }
  if (status === 401 || status === 403) {
    throw new ProviderUnauthorizedError(operation, `HTTP ${status}; the keys may have been reset${said}`, details);
  }
  if (status >= 200 && status < 300) {
    if (!parsed?.ok) {
      throw new ProviderAmbiguousError(operation, `HTTP ${status} with an unreadable body; outcome unknown`, details);
    }
    if (typeof body === 'object' && body !== null && (body as { success?: unknown }).success === false) {
      throw new ProviderRejectedError(operation, `refused (success: false)${said}`, {
        ...details,
        duplicateReference: DUPLICATE.test(rawMessage ?? ''),
      });
    }
    return { status, body };
  }
  // A refusal needs a readable answer: an empty body or an HTML error page (a proxy, a gateway)
  // says nothing definite about the request.
  if (status >= 400 && status < 500 && status !== 408 && status !== 429 && parsed?.ok === true) {
    throw new ProviderRejectedError(operation, `refused with HTTP ${status}${said}`, {
      ...details,
      duplicateReference: status === 409 || DUPLICATE.test(rawMessage ?? ''),
    });
  }
  const why = status >= 500 ? 'server error' : status >= 400 ? 'no definite refusal' : 'unexpected status';
  throw new ProviderAmbiguousError(operation, `HTTP ${status} (${why}); outcome unknown${said}`, details);
}
