import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FunctionDefinition } from '@shared/config/functions';
import { isolateConcurrentInvocations, loadFunction, type LocalFunction } from '@local/lambda';

/*
 * npm start runs every handler in one Node process and they share the one Powertools logger. Two
 * handlers (built on the project's lambdaChain and logger) invoked through the local runner at the
 * same time must each log only their own Lambda context and correlation keys, as they would in
 * their own execution environments in AWS.
 */
const definition = (id: 'payout-worker' | 'callback-applier'): FunctionDefinition => ({
  id,
  entry: 'test/e2e/fixtures/correlated-handler.ts',
  timeoutSeconds: 5,
  memoryMb: 128,
  callsProvider: false,
});

interface LogLine {
  message: string;
  function_name?: string;
  function_request_id?: string;
  payoutKey?: string;
}

let worker: LocalFunction;
let applier: LocalFunction;
const hadSetting = 'AWS_LAMBDA_MAX_CONCURRENCY' in process.env;
beforeAll(async () => {
  isolateConcurrentInvocations();
  worker = await loadFunction(definition('payout-worker'), { stage: 'logctx', region: 'eu-west-1' });
  applier = await loadFunction(definition('callback-applier'), { stage: 'logctx', region: 'eu-west-1' });
});
afterAll(() => {
  if (!hadSetting) delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
});

async function captureLines(run: () => Promise<unknown>): Promise<LogLine[]> {
  const written: string[] = [];
  // The logger writes each JSON line to stdout (warnings and errors to stderr).
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }),
  );
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return written
    .join('')
    .split('\n')
    .filter((line) => line.includes('"correlated: '))
    .map((line) => JSON.parse(line) as LogLine);
}

describe('local runner: per-invocation log context', () => {
  it('keeps function_name, request id and appended keys of overlapping invocations on their own lines', async () => {
    // The worker starts first and logs its second line after the applier has started and logged.
    const lines = await captureLines(() =>
      Promise.all([
        worker.invoke({ payoutKey: 'payout-of-worker', waitMs: 60 }),
        new Promise((resolve) => setTimeout(resolve, 15)).then(() => applier.invoke({ payoutKey: 'payout-of-applier', waitMs: 15 })),
      ]),
    );
    expect(lines).toHaveLength(4);
    const byKey = (key: string): LogLine[] => lines.filter((line) => line.payoutKey === key);
    const workerLines = byKey('payout-of-worker');
    const applierLines = byKey('payout-of-applier');
    expect(workerLines.map((line) => line.message)).toEqual(['correlated: before the wait', 'correlated: after the wait']);
    expect(applierLines.map((line) => line.message)).toEqual(['correlated: before the wait', 'correlated: after the wait']);
    for (const line of workerLines) expect(line.function_name).toBe('payrelay-logctx-payout-worker');
    for (const line of applierLines) expect(line.function_name).toBe('payrelay-logctx-callback-applier');
    // One request id per invocation, and never the other's.
    expect(new Set(workerLines.map((line) => line.function_request_id)).size).toBe(1);
    expect(new Set(applierLines.map((line) => line.function_request_id)).size).toBe(1);
    expect(workerLines[0]?.function_request_id).not.toBe(applierLines[0]?.function_request_id);
  });

  it('starts the next invocation of the same function without the keys the last one appended', async () => {
    await captureLines(() => worker.invoke({ payoutKey: 'first', waitMs: 0 }));
    const lines = await captureLines(() => worker.invoke({ waitMs: 0 }));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.payoutKey).toBeUndefined();
  });
});
