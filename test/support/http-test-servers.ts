import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query exactly as sent. */
  url: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** The body parsed as JSON, or undefined when empty or not JSON. */
  body: unknown;
}

export interface Reply {
  status: number;
  /** An object is sent as JSON; a string is sent verbatim. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

export interface RecordingServer extends TestServer {
  requests: RecordedRequest[];
  /** TCP connections accepted so far (shows whether keep-alive reused one). */
  connections: () => number;
  /** The latest request; throws when none came, so a test never asserts on a request that was not sent. */
  last(): RecordedRequest;
}

async function listen(server: http.Server | net.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

function closer(server: http.Server | net.Server, sockets: Set<net.Socket>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
}

function track(server: http.Server | net.Server): Set<net.Socket> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** An HTTP server on 127.0.0.1 that records every request and answers with `respond(request)`. */
export async function startRecordingServer(respond: (request: RecordedRequest) => Reply): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server = http.createServer(async (req, res) => {
    const rawBody = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: unknown;
    try {
      body = rawBody === '' ? undefined : JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      rawBody,
      body,
    };
    requests.push(recorded);
    const reply = respond(recorded);
    const text = reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
    res.end(text);
  });
  const sockets = track(server);
  let connections = 0;
  server.on('connection', () => {
    connections += 1;
  });
  const last = (): RecordedRequest => {
    const request = requests.at(-1);
    if (!request) throw new Error('no request recorded');
    return request;
  };
  return { url: await listen(server), requests, connections: () => connections, last, close: closer(server, sockets) };
}

/** Accepts connections and reads requests but never answers. `received` counts complete request bodies. */
export async function startSilentServer(): Promise<TestServer & { received: () => number }> {
  let received = 0;
  const server = http.createServer((req) => {
    void readBody(req).then(() => {
      received += 1;
    });
  });
  const sockets = track(server);
  return { url: await listen(server), received: () => received, close: closer(server, sockets) };
}

/** Reads the whole request body, then destroys the connection without answering (a reset after sending). */
export async function startDestroyingServer(): Promise<TestServer & { received: () => number }> {
  let received = 0;
  const server = http.createServer((req) => {
    void readBody(req).then(() => {
      received += 1;
      req.socket.destroy();
    });
  });
  const sockets = track(server);
  return { url: await listen(server), received: () => received, close: closer(server, sockets) };
}

/** A loopback URL nothing listens on (a port bound, then released), for connection-refused cases. */
export async function closedPortUrl(): Promise<string> {
  const server = net.createServer();
  const url = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}
