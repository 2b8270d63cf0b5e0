import { createRequire } from 'node:module';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import * as forLambda from '@infra/bundling/cls-context-for-lambda';

/*
 * The Lambda bundles run the X-Ray SDK's context on infra/bundling/cls-context-for-lambda.ts in place
 * of `cls-hooked/context` (PayrelayFunction's esbuild alias). Each scenario below is what the SDK's
 * Lambda build does with its namespace (env/aws_lambda.js at load, the Powertools tracer's
 * setSegment/getSegment per invocation, captureFunc/captureAsyncFunc), run against cls-hooked itself
 * and against the replacement: both must give the same answers.
 */

interface Namespace {
  createContext(): Record<string, unknown>;
  enter(context: Record<string, unknown>): void;
  exit(context: Record<string, unknown>): void;
  run(fn: (context: Record<string, unknown>) => void): Record<string, unknown>;
  set<T>(key: string, value: T): T;
  get(key: string): unknown;
}
interface ClsContext {
  createNamespace(name: string): Namespace;
  getNamespace(name: string): Namespace | undefined;
  destroyNamespace(name: string): void;
}

const clsHooked = createRequire(import.meta.url)('cls-hooked/context') as ClsContext;
const implementations: Array<[string, ClsContext]> = [
  ['cls-hooked', clsHooked],
  ['cls-context-for-lambda', forLambda as unknown as ClsContext],
];

let names = 0;
/** A fresh namespace per scenario (cls-hooked keeps them process-wide). */
function namespaceOf(cls: ClsContext): { ns: Namespace; name: string } {
  const name = `scenario-${(names += 1)}`;
  return { ns: cls.createNamespace(name), name };
}

describe.each(implementations)('the X-Ray SDK context on %s', (_label, cls) => {
  it('finds a namespace by name until it is destroyed', () => {
    const { ns, name } = namespaceOf(cls);
    expect(cls.getNamespace(name)).toBe(ns);
    cls.destroyNamespace(name);
    expect(cls.getNamespace(name)).toBeFalsy();
  });

  it('has no active context before one is entered: get answers undefined and set throws', () => {
    const { ns } = namespaceOf(cls);
    expect(ns.get('segment')).toBeUndefined();
    expect(() => ns.set('segment', 'x')).toThrow(/No context available/);
  });

  it('keeps the context the Lambda set-up enters at load for everything after it, as one shared context', async () => {
    const { ns } = namespaceOf(cls);
    // A callback scheduled before the context is entered still runs with it (the Lambda runtime's loop).
    // It fires well after the invocation below has ended (one turn of the loop), even on a loaded
    // machine: at 5 ms it once fired inside the invocation and saw its segment.
    const before = new Promise<unknown>((resolve) => setTimeout(() => resolve(ns.get('segment')), 200));
    ns.enter(ns.createContext());
    ns.set('segment', 'facade');
    expect(ns.get('segment')).toBe('facade');
    // An invocation: the tracer sets the handler segment, the SDK and provider spans read it later on.
    const invocation = (async () => {
      ns.set('segment', 'handler');
      await nextTurn();
      const seen = ns.get('segment');
      ns.set('segment', 'facade');
      return seen;
    })();
    expect(await invocation).toBe('handler');
    expect(await before).toBe('facade');
    expect(ns.get('segment')).toBe('facade');
  });

  it('runs a captured function in a child context: its async work sees its segment, the rest the parent', async () => {
    const { ns } = namespaceOf(cls);
    ns.enter(ns.createContext());
    ns.set('segment', 'handler');
    const seen: Record<string, unknown> = {};
    const runs = ['a', 'b'].map(
      (name) =>
        new Promise<void>((resolve) => {
          ns.run(() => {
            ns.set('segment', `sub-${name}`);
            setTimeout(async () => {
              await nextTurn();
              seen[name] = ns.get('segment');
              resolve();
            }, name === 'a' ? 10 : 1);
          });
        }),
    );
    expect(ns.get('segment')).toBe('handler');
    await Promise.all(runs);
    expect(seen).toEqual({ a: 'sub-a', b: 'sub-b' });
    expect(ns.get('segment')).toBe('handler');
  });

  it('gives a run a context that inherits the active one and returns it', () => {
    const { ns } = namespaceOf(cls);
    const root = ns.createContext();
    ns.enter(root);
    ns.set('trace', 't-1');
    let inner: unknown;
    const context = ns.run(() => {
      inner = ns.get('trace');
    });
    expect(inner).toBe('t-1');
    expect(Object.getPrototypeOf(context)).toBe(root);
  });

  it('falls back to no context once the entered one is exited', () => {
    const { ns } = namespaceOf(cls);
    const context = ns.createContext();
    ns.enter(context);
    ns.set('segment', 'facade');
    ns.exit(context);
    expect(ns.get('segment')).toBeUndefined();
  });
});

describe("cls-hooked's members the Lambda build never calls", () => {
  it('throw a clear error instead of misbehaving', () => {
    const ns = forLambda.createNamespace('left-out');
    for (const member of ['runAndReturn', 'runPromise', 'bind', 'bindEmitter', 'fromException'] as const) {
      expect(() => (ns[member] as () => void)(), member).toThrow(/left out of payrelay's Lambda build of cls-hooked/);
    }
  });
});
