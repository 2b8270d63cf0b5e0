import { AsyncLocalStorage } from 'node:async_hooks';
import type { InitializeMiddleware } from '@smithy/types';
import type { WithMiddleware } from '@bench/lib/aws-counter';

/*
 * Worker crashes at the step boundaries of money-safety rule 1, injected without touching the
 * worker: a middleware on the DynamoDB client the worker's repository uses recognizes the
 * conditional writes that mark each boundary and throws SimulatedCrash there. The invocation that
 * crashed is then failed as a whole, like a Lambda that died: nothing of its batch is deleted.
 */

/** Where a worker dies. */
export type CrashBoundary = 'before-submitting' | 'after-submitting' | 'after-payout-call';
export const CRASH_BOUNDARIES: readonly CrashBoundary[] = ['before-submitting', 'after-submitting', 'after-payout-call'];

/** The injected death of a worker; never an error the code under test should catch and survive. */
export class SimulatedCrash extends Error {
  override name = 'SimulatedCrash';
  constructor(readonly boundary: CrashBoundary, readonly withdrawalReference: string) {
    super(`simulated worker crash ${boundary} of ${withdrawalReference}`);
  }
}

/** One worker invocation: whether it crashed. */
interface InvocationScope {
  crashed?: SimulatedCrash;
}

export interface CrashInjector {
  /** Runs one worker invocation; throws its SimulatedCrash after it returns if it crashed. */
  invoke<T>(fn: () => Promise<T>): Promise<T>;
  /** Crashes injected so far, per boundary. */
  readonly counts: Record<CrashBoundary, number>;
}

/** A DynamoDB attribute as the document client holds it, or marshalled (`{ S: 'x' }`). */
const text = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string') return (value as { S: string }).S;
  return undefined;
};

/**
 * Installs the crash middleware on `clients` (every client the worker's payout writes may go
 * through: the document client and the repository's own item writer). `plan(reference)` says where
 * (if anywhere) the payout with that withdrawal_reference crashes; each planned crash happens once.
 */
export function installCrashInjector(
  clients: readonly WithMiddleware[],
  payoutsTable: string,
  plan: (withdrawalReference: string) => CrashBoundary | undefined,
): CrashInjector {
  const scope = new AsyncLocalStorage<InvocationScope>();
  const done = new Set<string>();
  const counts: Record<CrashBoundary, number> = { 'before-submitting': 0, 'after-submitting': 0, 'after-payout-call': 0 };

  const crash = (boundary: CrashBoundary, reference: string): never => {
    done.add(reference);
    counts[boundary] += 1;
    const error = new SimulatedCrash(boundary, reference);
    const current = scope.getStore();
    if (current) current.crashed ??= error;
    throw error;
  };

  const middleware: InitializeMiddleware<object, object> = (next, context) => async (args) => {
    const current = scope.getStore();
    const input = args.input as { TableName?: string; Item?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
    if (!current || context.commandName !== 'PutCommand' && context.commandName !== 'PutItemCommand') return next(args);
    if (input.TableName !== payoutsTable || !input.Item) return next(args);
    const reference = text(input.Item.withdrawal_reference) ?? '';
    const boundary = plan(reference);
    if (boundary === undefined || done.has(reference)) return next(args);
    const to = text(input.Item.state);
    const from = text(input.ExpressionAttributeValues?.[':state']);
    // The intent to pay: the worker's create (no state condition), or the write that moves a payout
    // `payouts enqueue` recorded (ACCEPTED) or left VERIFYING to SUBMITTING.
    if (to === 'SUBMITTING' && from !== 'SUBMITTING') {
      if (boundary === 'before-submitting') crash(boundary, reference);
      const result = await next(args);
      if (boundary === 'after-submitting') crash(boundary, reference);
      return result;
    }
    // The write of the Payout call's outcome (or of "not sent"): the call has been made, or (a
    // release after a verification that could not complete) was never made. A withdrawn intent
    // (to REJECTED) is not a Payout boundary.
    if (from === 'SUBMITTING' && to !== 'REJECTED' && boundary === 'after-payout-call') crash(boundary, reference);
    return next(args);
  };
  for (const client of clients) client.middlewareStack.add(middleware, { step: 'initialize', name: 'chaosCrashInjector' });

  return {
    counts,
    async invoke(fn) {
      const invocation: InvocationScope = {};
      const result = await scope.run(invocation, fn);
      if (invocation.crashed) throw invocation.crashed;
      return result;
    },
  };
}
