/*
 * `node:stream/web` as payrelay's Lambda bundles carry it: Node's own ReadableStream, loaded the first
 * time it is used instead of when the bundle starts. PayrelayFunction's esbuild alias puts this module
 * wherever the bundle imports `node:stream/web`.
 *
 * Why: @middy/core 6 imports ReadableStream from `node:stream/web` at the top of its one module, only
 * to check with `instanceof` whether a streamed response (`streamifyResponse`) returned a web stream.
 * Importing that module makes Node load its whole web streams implementation, about 3 ms of CPU at
 * every cold start of every function, none of which streams a response. middy 7 moves the import
 * into the streaming path, but needs Node 22; the project's tools run on Node 20 (docs/performance.md).
 *
 * The binding forwards everything to `globalThis.ReadableStream`, the same class `node:stream/web`
 * exports, which Node loads on first read: `instanceof`, `new`, static members (`from`) and the
 * prototype behave as the class's own. Only identity differs (this binding is not the class object).
 * Any other name imported from `node:stream/web` fails the bundling loudly instead of being shimmed.
 * test/infra/stream-web-for-lambda.test.ts checks both the behaviour and that nothing is loaded early.
 */

type ReadableStreamClass = typeof globalThis.ReadableStream;

/** Node's class; reading the global is what loads the web streams implementation. */
const nodeReadableStream = (): ReadableStreamClass => globalThis.ReadableStream;

/** ReadableStream, resolved on first use (see the module's header). */
export const ReadableStream: ReadableStreamClass = new Proxy(function ReadableStream() {} as unknown as ReadableStreamClass, {
  construct: (_target, args, newTarget) =>
    Reflect.construct(nodeReadableStream(), args, newTarget === ReadableStream ? nodeReadableStream() : newTarget) as object,
  apply: (_target, thisArg, args) => Reflect.apply(nodeReadableStream() as unknown as (...a: unknown[]) => unknown, thisArg, args),
  get: (_target, property) =>
    property === Symbol.hasInstance ? (value: unknown) => value instanceof nodeReadableStream() : Reflect.get(nodeReadableStream(), property),
  has: (_target, property) => Reflect.has(nodeReadableStream(), property),
});
