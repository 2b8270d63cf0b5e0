import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { RouteDefinition } from '@shared/config/functions';
import { contentCodings } from '@shared/http/body-decoding';
import { LOCAL_ACCOUNT_ID, type LocalFunction } from './lambda';

/** HTTP API's own payload limit; the handlers enforce their smaller limits themselves. */
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;
const LOCAL_API_ID = 'local';

/** A route with its path template compiled to a matcher. */
interface CompiledRoute {
  readonly route: RouteDefinition;
  readonly routeKey: string;
  match(path: string): Record<string, string> | undefined;
}

/** Compiles `/a/{name}/b` (and a greedy `{proxy+}`) into a matcher that yields pathParameters. */
export function compileRoute(route: RouteDefinition): CompiledRoute {
  const names: string[] = [];
  const pattern = route.path
    .split('/')
    .map((segment) => {
      const param = /^\{([A-Za-z0-9_]+)(\+?)\}$/.exec(segment);
      if (!param) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(param[1] as string);
      return param[2] ? '(.+)' : '([^/]+)';
    })
    .join('/');
  const regex = new RegExp(`^${pattern}$`);
  return {
    route,
    routeKey: `${route.method} ${route.path}`,
    match(path) {
      const m = regex.exec(path);
      if (!m) return undefined;
      const params: Record<string, string> = {};
      names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] as string);
      });
      return params;
    },
  };
}

/** Content types HTTP API passes through as text; anything else arrives base64-encoded. */
function isTextContentType(contentType: string | undefined): boolean {
  if (!contentType) return true;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return (
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type === 'application/xml' ||
    type.endsWith('+xml') ||
    type === 'application/javascript' ||
    type === 'application/x-www-form-urlencoded'
  );
}

/** Input of {@link buildHttpApiEvent}: what the gateway read off the wire. */
export interface RawHttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  readonly sourceIp: string;
}

/**
 * Builds an API Gateway HTTP API (payload v2.0) event: lower-cased headers with repeated values
 * joined by commas, cookies split out, query parameters, path parameters, and a body that is text
 * for uncompressed text content types and base64 otherwise (any Content-Encoding but identity), as
 * API Gateway delivers it.
 */
export function buildHttpApiEvent(
  request: RawHttpRequest,
  routeKey: string,
  pathParameters: Record<string, string>,
  now = new Date(),
): APIGatewayProxyEventV2 {
  const url = new URL(request.url, 'http://localhost');
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    if (key === 'cookie') {
      cookies = (Array.isArray(value) ? value.join('; ') : value).split(/;\s*/).filter(Boolean);
      continue;
    }
    headers[key] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  }
  // A compressed body is binary whatever its Content-Type: HTTP API hands it over base64-encoded.
  const text = isTextContentType(headers['content-type']) && contentCodings(headers['content-encoding']).length === 0;
  const hasBody = request.body.length > 0;
  const requestId = randomUUID();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: LOCAL_API_ID,
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: request.method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    ...(hasBody ? { body: text ? request.body.toString('utf8') : request.body.toString('base64') } : {}),
    isBase64Encoded: hasBody && !text,
  };
}

/** Turns a handler result into status, headers and body the way HTTP API does (payload v2.0). */
export function toHttpResponse(result: unknown): { statusCode: number; headers: Record<string, string>; body: Buffer } {
  if (result !== null && typeof result === 'object' && 'statusCode' in result) {
    const r = result as APIGatewayProxyStructuredResultV2;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(v);
    if (r.cookies?.length) headers['set-cookie'] = r.cookies.join(', ');
    const body = r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body, r.isBase64Encoded ? 'base64' : 'utf8');
    return { statusCode: r.statusCode ?? 200, headers, body };
  }
  // Without a statusCode, HTTP API treats the return value as a JSON 200 response.
  const body = result === undefined ? '' : typeof result === 'string' ? result : JSON.stringify(result);
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
}

/** One line per request, for the local stack's console. */
export type AccessLog = (line: string) => void;

export interface GatewayOptions {
  readonly port: number;
  readonly host?: string;
  readonly routes: readonly RouteDefinition[];
  /** Loaded handlers by function id. */
  readonly functions: ReadonlyMap<string, LocalFunction>;
  readonly log?: AccessLog;
  /**
   * Called after a route answered 2xx, once the answer is sent: the receivers store the callback
   * before their 200, so the local stack nudges its callback applier here, as the events stream does.
   */
  readonly onStored?: () => void;
}

export interface GatewayHandle {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_PAYLOAD_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolvePromise(tooLarge ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, statusCode: number, headers: Record<string, string>, body: Buffer): void {
  res.writeHead(statusCode, { ...headers, 'content-length': String(body.length) });
  res.end(body);
}

const jsonMessage = (message: string): Buffer => Buffer.from(JSON.stringify({ message }));

/**
 * A local stand-in for API Gateway's HTTP API: serves exactly the given routes, invokes the same
 * handler modules with HTTP API v2 events, and answers unmatched routes 404 and handler crashes 500
 * with API Gateway's own bodies (the crash itself is logged, never sent to the caller).
 */
export async function startGateway(options: GatewayOptions): Promise<GatewayHandle> {
  const compiled = options.routes.map(compileRoute);
  const log = options.log ?? (() => {});
  const server: Server = createServer((req, res) => {
    void (async () => {
      const started = Date.now();
      const method = req.method ?? 'GET';
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      let status = 500;
      try {
        const body = await readBody(req);
        let match: { route: CompiledRoute; params: Record<string, string> } | undefined;
        for (const route of compiled) {
          if (route.route.method !== method) continue;
          const params = route.match(path);
          if (params) {
            match = { route, params };
            break;
          }
        }
        if (!match) {
          status = 404;
          send(res, 404, { 'content-type': 'application/json' }, jsonMessage('Not Found'));
          return;
        }
        if (body === 'too-large') {
          status = 413;
          send(res, 413, { 'content-type': 'application/json' }, jsonMessage('Request Entity Too Large'));
          return;
        }
        const fn = options.functions.get(match.route.route.functionId);
        if (!fn) throw new Error(`no handler loaded for ${match.route.route.functionId}`);
        const event = buildHttpApiEvent(
          { method, url: req.url ?? '/', headers: req.headers, body, sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1' },
          match.route.routeKey,
          match.params,
        );
        const response = toHttpResponse(await fn.invoke(event));
        status = response.statusCode;
        send(res, response.statusCode, response.headers, response.body);
        if (status >= 200 && status < 300) options.onStored?.();
      } catch (error) {
        status = 500;
        log(`gateway: handler error on ${method} ${redactPath(path)}: ${(error as Error).name}: ${(error as Error).message}`);
        if (!res.headersSent) send(res, 500, { 'content-type': 'application/json' }, jsonMessage('Internal Server Error'));
      } finally {
        log(`gateway: ${method} ${redactPath(path)} -> ${status} (${Date.now() - started} ms)`);
      }
    })();
  });
  // A request Node refuses before routing (headers over its limit, broken HTTP) gets an answer with a
  // body and a log line like every other refusal, instead of Node's bare 400/431.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return;
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const [status, text] = tooLarge ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request'];
    const body = jsonMessage(text);
    log(`gateway: request refused before routing -> ${status} (${tooLarge ? 'request headers over the size limit' : `malformed HTTP request: ${error.code ?? error.name}`})`);
    socket.end(`HTTP/1.1 ${status} ${text}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString()}`);
  });
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', () => resolvePromise());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolvePromise) => {
        server.close(() => resolvePromise());
        server.closeAllConnections();
      }),
  };
}

/**
 * The KYC callback token is a credential: keep it out of the access log, also on a path that only
 * nearly matches the route (`/callbacks//kyc/<token>`, `/Callbacks/KYC/<token>`): whatever follows a
 * `kyc` segment is masked.
 */
function redactPath(path: string): string {
  return path
    .split('/')
    .map((segment, i, all) => (i > 0 && /^kyc$/i.test(all[i - 1] as string) ? '***' : segment))
    .join('/');
}
