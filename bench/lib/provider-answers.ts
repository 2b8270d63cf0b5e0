import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { summarize } from './stats';

/** The two provider calls of a payout, as their paths name them. */
const OPERATIONS = { verification: '/AccountVerification', payout: '/Payout/' } as const;
type Operation = keyof typeof OPERATIONS;

/** When each answer of the two provider calls finished (ms, this process's clock), in order. */
export type ProviderAnswers = Record<Operation, number[]>;

/**
 * Records when answers to AccountVerification and Payout finish, through Node's http diagnostics
 * channels: on the simulator's side (`server`: the answer has been handed to the socket) or on the
 * worker's (`client`: the worker's event loop has read the whole answer). Comparing the two shows
 * whose event loop a batch's answers wait for.
 */
export function watchProviderAnswers(side: 'server' | 'client'): { take(): ProviderAnswers; stop(): void } {
  let answers: ProviderAnswers = { verification: [], payout: [] };
  const channel = side === 'server' ? 'http.server.response.finish' : 'http.client.response.finish';
  const listener = (message: unknown): void => {
    const { request } = message as { request: IncomingMessage | ClientRequest };
    const path = ('path' in request ? request.path : request.url) ?? '';
    for (const operation of Object.keys(OPERATIONS) as Operation[]) {
      if (path.includes(OPERATIONS[operation])) answers[operation].push(performance.now());
    }
  };
  subscribe(channel, listener);
  return {
    take() {
      const taken = answers;
      answers = { verification: [], payout: [] };
      return taken;
    },
    stop: () => unsubscribe(channel, listener),
  };
}

/**
 * How far apart the answers of one batch finish, first to last, median over the batches. A batch's
 * answers come within a few milliseconds and batches are about 2L apart, so a gap longer than
 * `gapMs` starts the next batch; groups of another size than `perBatch` (a batch cut by the window)
 * are left out.
 */
export function answerSpreadMs(times: readonly number[], gapMs: number, perBatch: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  const spreads: number[] = [];
  let group: number[] = [];
  const close = (): void => {
    if (group.length === perBatch) spreads.push((group[group.length - 1] as number) - (group[0] as number));
    group = [];
  };
  for (const t of sorted) {
    if (group.length > 0 && t - (group[group.length - 1] as number) > gapMs) close();
    group.push(t);
  }
  close();
  return spreads.length === 0 ? Number.NaN : summarize(spreads).median;
}
