import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { summarize } from './stats';

/** The two provider calls of a payout, as their paths name them. */
const OPERATIONS = { verification: '/AccountVerification', payout: '/Payout/' } as const;
type Operation = keyof typeof OPERATIONS;

/** When each of the two provider calls reached a point (ms, this process's clock), in order. */
export type ProviderCallTimes = Record<Operation, number[]>;

/**
 * Where a provider call is seen, through Node's http diagnostics channels: `sent`, the worker's
 * request got its socket and left (published then, not at creation); `read`, the worker's event loop
 * has read the whole answer; `answered`, the simulator has handed the whole answer to the socket.
 */
const CHANNELS = { sent: 'http.client.request.start', read: 'http.client.response.finish', answered: 'http.server.response.finish' } as const;

/**
 * Times kept per call until taken: the emulator host watches every part's provider calls and only
 * the throughput part takes them, so without a bound the other parts' calls would pile up there.
 */
const MAX_KEPT = 20_000;

/**
 * Records when AccountVerification and Payout calls reach one point (see CHANNELS), in the process
 * that calls this. Comparing `answered` on the simulator's side with `read` on the worker's shows
 * whose event loop a batch's answers wait for.
 */
export function watchProviderCalls(point: keyof typeof CHANNELS): { take(): ProviderCallTimes; stop(): void } {
  let times: ProviderCallTimes = { verification: [], payout: [] };
  const channel = CHANNELS[point];
  const listener = (message: unknown): void => {
    const { request } = message as { request: IncomingMessage | ClientRequest };
    const path = ('path' in request ? request.path : request.url) ?? '';
    for (const operation of Object.keys(OPERATIONS) as Operation[]) {
      if (path.includes(OPERATIONS[operation]) && times[operation].length < MAX_KEPT) times[operation].push(performance.now());
    }
  };
  subscribe(channel, listener);
  return {
    take() {
      const taken = times;
      times = { verification: [], payout: [] };
      return taken;
    },
    stop: () => unsubscribe(channel, listener),
  };
}

/**
 * How far apart answers to requests sent together finish, first to last, median over the groups. The
 * worker sends min(batch size, WORKER_CONCURRENCY) of each call at once, their answers come within a
 * few milliseconds, and the next group is about 2L later, so a gap longer than `gapMs` starts the
 * next group; groups of another size than `perGroup` (cut by the window) are left out.
 */
export function answerSpreadMs(times: readonly number[], gapMs: number, perGroup: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  const spreads: number[] = [];
  let group: number[] = [];
  const close = (): void => {
    if (group.length === perGroup) spreads.push((group[group.length - 1] as number) - (group[0] as number));
    group = [];
  };
  for (const t of sorted) {
    if (group.length > 0 && t - (group[group.length - 1] as number) > gapMs) close();
    group.push(t);
  }
  close();
  return spreads.length === 0 ? Number.NaN : summarize(spreads).median;
}
