import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';
import type { FunctionDefinition } from '@shared/config/functions';
import { resourceName } from '@shared/config/resources';

/** The repository root: handler entries in FUNCTIONS are relative to it. */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A fake 12-digit account id for ARNs in local events; never a real account. */
export const LOCAL_ACCOUNT_ID = '000000000000';

/**
 * Makes the Powertools logger (and metrics, tracer) keep their per-invocation state in the invoke
 * store instead of on the shared instances, as the Lambda runtime does for a multi-concurrency
 * function. Every local handler runs in one Node process, so without this the Lambda context and
 * the correlation keys of one invocation show on the log lines of another that overlaps it.
 * Local only (npm start's process): once it is set, Powertools calls made outside an invocation
 * throw, so a process that also calls handlers directly must not set it.
 */
export function isolateConcurrentInvocations(): void {
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '64';
}

/** Thrown when a handler module cannot be loaded or does not export `handler`. */
export class HandlerLoadError extends Error {
  override name = 'HandlerLoadError';
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each handler has its own event type
type AnyHandler = (event: any, context: Context) => Promise<unknown>;

/** A loaded handler module bound to its function definition, invoked the way the Lambda runtime does. */
export interface LocalFunction {
  readonly definition: FunctionDefinition;
  readonly name: string;
  invoke<R = unknown>(event: unknown): Promise<R>;
}

/**
 * Imports a handler module by its FUNCTIONS entry. Handlers read env at module load, so the caller
 * sets process.env (emulator endpoints, table names, provider URLs) before calling this.
 */
export async function loadFunction(
  definition: FunctionDefinition,
  options: { stage: string; region: string; onSlow?: (message: string) => void },
): Promise<LocalFunction> {
  const modulePath = resolve(REPO_ROOT, definition.entry);
  // Always the async-local store: it costs nothing when isolation is off (Powertools then ignores it).
  const store = await InvokeStore.getInstanceAsync(true);
  let mod: { handler?: unknown };
  try {
    // The module's init code (logger, metrics, tracer set-up) runs in a context of its own, like Lambda's init phase.
    mod = (await store.run({}, () => import(modulePath))) as { handler?: unknown };
  } catch (error) {
    throw new HandlerLoadError(`cannot load ${definition.entry}: ${(error as Error).message}`);
  }
  if (typeof mod.handler !== 'function') {
    throw new HandlerLoadError(`${definition.entry} does not export a handler function`);
  }
  const handler = mod.handler as AnyHandler;
  const name = resourceName(options.stage, definition.id);
  return {
    definition,
    name,
    async invoke<R>(event: unknown): Promise<R> {
      const context = createLambdaContext(definition, name, options.region);
      const started = Date.now();
      try {
        const invocation = { [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId };
        return (await store.run(invocation, () => handler(event, context))) as R;
      } finally {
        // The local runner cannot freeze a running handler the way Lambda does at its time-out;
        // it reports the overrun so a slow handler is visible before it is deployed.
        const elapsed = Date.now() - started;
        if (elapsed > definition.timeoutSeconds * 1000) {
          options.onSlow?.(`${name} ran ${elapsed} ms, over its ${definition.timeoutSeconds} s Lambda time-out`);
        }
      }
    },
  };
}

/** A LambdaContext like the runtime's: remaining time counts down from the function's time-out. */
export function createLambdaContext(definition: FunctionDefinition, functionName: string, region: string): Context {
  const deadline = Date.now() + definition.timeoutSeconds * 1000;
  const unsupported = (): never => {
    throw new Error('callback-style completion is not supported; return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: String(definition.memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `local/[$LATEST]${randomUUID().replaceAll('-', '')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
