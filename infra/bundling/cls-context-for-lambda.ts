import { AsyncLocalStorage } from 'node:async_hooks';

/*
 * The context store of the X-Ray SDK (`cls-hooked/context`) as payrelay's Lambda bundles carry it:
 * the same namespace API on Node's AsyncLocalStorage. PayrelayFunction's esbuild alias puts this
 * module where the SDK's context_utils requires `cls-hooked/context`.
 *
 * Why: cls-hooked keeps the current segment with an async hook of its own (init, before, after and
 * destroy on every promise and callback of the process) and loads `assert`, `emitter-listener` and
 * `shimmer` to do it. That cost every traced cold start a few milliseconds of CPU and every
 * invocation a hook call per promise. AsyncLocalStorage is Node's own, and costs nothing until a
 * context is run.
 *
 * What the SDK build (infra/bundling/xray-sdk-for-lambda.cjs) calls, and how it behaves here exactly
 * as with cls-hooked:
 * - Lambda set-up (`env/aws_lambda.js`) enters one context at load, outside any run, and never leaves
 *   it: with cls-hooked it stays active for the whole process, callbacks of resources created before
 *   it included. Here it is the namespace's process-wide context, the one `get` and `set` use outside
 *   a run. The handler segment the Powertools tracer sets each invocation is set on it.
 * - `run(fn)` (captureFunc, captureAsyncFunc) runs `fn` in a child context (inheriting the active one),
 *   and everything asynchronous started inside sees the child; concurrent runs stay apart.
 * - `get` and `set` read and write the active context; `set` with none throws cls-hooked's error.
 * The rest of cls-hooked's API is used only by the patchers this build leaves out (AWS SDK v2, global
 * HTTP, promises): those members throw a clear error. test/infra/cls-context-for-lambda.test.ts runs
 * the same scenarios against cls-hooked and this module.
 */

type Context = Record<string, unknown>;

/** A member of cls-hooked that nothing in the Lambda build calls: calling it says so. */
function leftOut(name: string): () => never {
  return () => {
    throw new Error(
      `Namespace.${name} is left out of payrelay's Lambda build of cls-hooked (infra/bundling/cls-context-for-lambda.ts): ` +
        'only the members the X-Ray SDK Lambda build calls are there',
    );
  };
}

/** One cls-hooked namespace over AsyncLocalStorage (see the module's header for the semantics kept). */
export class Namespace {
  readonly #storage = new AsyncLocalStorage<Context>();
  /** Contexts entered outside any run, innermost last: the last one is active wherever no run is. */
  readonly #entered: Context[] = [];

  constructor(readonly name: string) {}

  /** The context `get` and `set` use: the innermost run's, else the one entered outside any run. */
  get active(): Context | undefined {
    return this.#storage.getStore() ?? this.#entered.at(-1);
  }

  createContext(): Context {
    return Object.create(this.active ?? Object.prototype) as Context;
  }

  /** Makes `context` active wherever no run is, until `exit(context)`: what the Lambda set-up does at load. */
  enter(context: Context): void {
    if (!context) throw new Error('context must be provided for entering');
    if (this.#storage.getStore()) {
      throw new Error(`Namespace.enter inside a run is left out of payrelay's Lambda build of cls-hooked: use run()`);
    }
    this.#entered.push(context);
  }

  exit(context: Context): void {
    const index = this.#entered.lastIndexOf(context);
    if (index < 0) throw new Error("context not currently entered; can't exit");
    this.#entered.splice(index, 1);
  }

  /** Runs `fn` in a new child context of the active one; returns that context, as cls-hooked does. */
  run(fn: (context: Context) => void): Context {
    const context = this.createContext();
    this.#storage.run(context, () => fn(context));
    return context;
  }

  set<T>(key: string, value: T): T {
    const active = this.active;
    if (!active) throw new Error('No context available. ns.run() or ns.bind() must be called first.');
    active[key] = value;
    return value;
  }

  get(key: string): unknown {
    return this.active?.[key];
  }

  readonly runAndReturn = leftOut('runAndReturn');
  readonly runPromise = leftOut('runPromise');
  readonly bind = leftOut('bind');
  readonly bindEmitter = leftOut('bindEmitter');
  readonly fromException = leftOut('fromException');
}

const namespaces = new Map<string, Namespace>();

/** The namespace created under `name` (the SDK looks its own up on every segment read and write). */
export function getNamespace(name: string): Namespace | undefined {
  return namespaces.get(name);
}

/** Creates the namespace the SDK keeps its segments in, once, when its context module loads. */
export function createNamespace(name: string): Namespace {
  if (!name) throw new Error('namespace must be given a name.');
  const namespace = new Namespace(name);
  namespaces.set(name, namespace);
  return namespace;
}

/** Forgets a namespace (the SDK's manual mode does this; the Lambda set-up turns manual mode off). */
export function destroyNamespace(name: string): void {
  if (!namespaces.delete(name)) throw new Error(`can't delete nonexistent namespace! "${name}"`);
}
