import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';

/**
 * Counts outgoing HTTP requests to one host:port at the client, through Node's http diagnostics
 * channel: every request any module sends (the provider clients included) is seen, keyed by path.
 */
export function countHttpCalls(hostPort: string): { counts(): Record<string, number>; total(): number; reset(): void; stop(): void } {
  let counts = new Map<string, number>();
  const listener = (message: unknown): void => {
    const request = (message as { request: ClientRequest }).request;
    if (String(request.getHeader('host')) !== hostPort) return;
    const path = request.path.split('?')[0] ?? request.path;
    counts.set(path, (counts.get(path) ?? 0) + 1);
  };
  subscribe('http.client.request.start', listener);
  return {
    counts: () => Object.fromEntries(counts),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    reset: () => {
      counts = new Map();
    },
    stop: () => unsubscribe('http.client.request.start', listener),
  };
}
