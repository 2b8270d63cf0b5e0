import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { startGateway } from '@local/gateway';
import { loadFunction, type LocalFunction } from '@local/lambda';
import { FUNCTIONS, ROUTES } from '@shared/config/functions';
import { BENCH_KYC_SECRET, startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult } from '../lib/part';
import { ms, summarize } from '../lib/stats';
import { kycCallbackBody } from './ingest';

interface Outcome {
  status: number;
  ms: number;
}

/** One POST on a keep-alive agent; a network error is status 0. */
function post(agent: Agent, url: URL, body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
        res.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

/**
 * The KYC callback route under load: the local gateway (local/gateway.ts, HTTP API v2 events) in
 * front of the kyc-callback handler module, dynalite and the secrets stand-in in their own process,
 * `concurrency` keep-alive connections on loopback, every request a new callback of a new user.
 * Bounded by count and by time: it stops by itself.
 */
export const load: Part = async ({ options, progress }): Promise<PartResult> => {
  const { loadRequests: total, loadConcurrency: concurrency, loadMaxSeconds: maxSeconds } = options;
  const emulators = await startHandlerEnv({ stage: 'bench-load', logLevel: options.logLevel });
  const region = process.env.AWS_REGION ?? 'eu-west-1';
  const functions = new Map<string, LocalFunction>([
    [FUNCTIONS.kycCallback.id, await loadFunction(FUNCTIONS.kycCallback, { stage: 'bench-load', region })],
  ]);
  const gateway = await startGateway({ port: 0, host: '127.0.0.1', routes: ROUTES.filter((r) => r.functionId === FUNCTIONS.kycCallback.id), functions });
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    const url = new URL(`/callbacks/kyc/${BENCH_KYC_SECRET.callback_token}`, gateway.url);
    const run = Date.now().toString(36);
    // Warm-up: the handler's secret cache, connections, JIT. Not counted.
    await Promise.all(Array.from({ length: concurrency }, (_, i) => post(agent, url, kycCallbackBody(i, `${run}-warm`))));

    const latencies: number[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const deadline = performance.now() + maxSeconds * 1000;
    const started = performance.now();
    let lastReport = started;
    const worker = async (): Promise<void> => {
      while (next < total && performance.now() < deadline) {
        const i = next++;
        const outcome = await post(agent, url, kycCallbackBody(i, run));
        latencies.push(outcome.ms);
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          progress(`load: ${latencies.length}/${total} requests`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    const sent = latencies.length;
    const errors = sent - (statuses.get(200) ?? 0);
    const s = summarize(latencies);
    const stoppedByTime = sent < total;
    return {
      part: 'load',
      title: `6. Load: KYC callback route through the local gateway (${concurrency} connections, loopback)`,
      rows: [
        {
          metric: `requests (concurrency ${concurrency})`,
          value: `${sent.toLocaleString('en-US')} in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(0)}/s)`,
          reference: `asked ${total.toLocaleString('en-US')}, at most ${maxSeconds} s`,
          verdict: stoppedByTime ? 'missed' : 'info',
        },
        { metric: 'errors (non-200 or network)', value: String(errors), target: '0', verdict: verdict(errors === 0) },
        { metric: 'latency p50; p99', value: `${ms(s.median)}; ${ms(s.p99)}`, reference: `max ${ms(s.max)}`, verdict: 'info' },
      ],
      data: { total, sent, concurrency, seconds, statuses: Object.fromEntries(statuses), latency: s, stoppedByTime },
      notes: [
        'Each request is a new callback (new user_reference): the event is stored and the KYC subject created, so every request does three DynamoDB calls.',
        'The load generator, the gateway and the handler share one Node process (one core at most); dynalite and the secrets stand-in run in another. On Lambda each request would get its own execution environment.',
      ],
    };
  } finally {
    agent.destroy();
    await gateway.close();
    await emulators.stop();
  }
};
