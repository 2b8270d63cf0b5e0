import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { PAYRELAY_PROJECT_ROOT } from '@infra/payrelay';
import { BUNDLE_ALIASES, STREAM_WEB_FOR_LAMBDA } from '@infra/payrelay-function';
import { ReadableStream as LazyReadableStream } from '@infra/bundling/stream-web-for-lambda';

/*
 * `node:stream/web` as the Lambda bundles carry it (PayrelayFunction aliases it to
 * infra/bundling/stream-web-for-lambda.ts): Node's own ReadableStream, loaded on first use.
 */

const run = promisify(execFile);
const work = mkdtempSync(path.join(tmpdir(), 'payrelay-stream-web-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Reads a web stream to the end. */
async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const chunks: T[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<T>) chunks.push(chunk);
  return chunks;
}

/**
 * Bundles `entry` as the functions are bundled (ESM for Node, the bundle aliases) and runs it in a
 * fresh Node process; returns what it printed.
 */
async function runBundled(name: string, entry: string): Promise<string> {
  const source = path.join(work, `${name}.mjs`);
  writeFileSync(source, entry);
  const outfile = path.join(work, `${name}.bundle.mjs`);
  await build({
    entryPoints: [source],
    bundle: true,
    format: 'esm',
    platform: 'node',
    outfile,
    absWorkingDir: PAYRELAY_PROJECT_ROOT,
    alias: { 'node:stream/web': path.join(PAYRELAY_PROJECT_ROOT, STREAM_WEB_FOR_LAMBDA) },
    logLevel: 'silent',
  });
  const { stdout } = await run(process.execPath, [outfile], { timeout: 30_000 });
  return stdout.trim();
}

/** A script line printing whether Node has loaded its ReadableStream implementation yet. */
const PRINT_LOADED = `console.log(process.moduleLoadList.includes('NativeModule internal/webstreams/readablestream'));`;

describe("the bundles' node:stream/web", () => {
  it('is aliased in every bundle', () => {
    expect(BUNDLE_ALIASES['node:stream/web']).toBe(STREAM_WEB_FOR_LAMBDA);
  });

  it('behaves as Node’s ReadableStream: new, instanceof, static from, calling without new', async () => {
    const stream = new LazyReadableStream<number>({
      start(controller) {
        controller.enqueue(1);
        controller.enqueue(2);
        controller.close();
      },
    });
    expect(stream).toBeInstanceOf(globalThis.ReadableStream);
    expect(stream instanceof LazyReadableStream).toBe(true);
    expect(await readAll(stream)).toEqual([1, 2]);
    expect(new globalThis.ReadableStream() instanceof LazyReadableStream).toBe(true);
    expect({} instanceof LazyReadableStream).toBe(false);
    expect(await readAll(LazyReadableStream.from(['a', 'b']))).toEqual(['a', 'b']);
    expect(Object.getPrototypeOf(stream)).toBe(globalThis.ReadableStream.prototype);
    expect(() => (LazyReadableStream as unknown as () => unknown)()).toThrow(TypeError);
  });

  it('loads nothing when imported, and Node’s streams on first use (a plain import loads them at once)', async () => {
    const lazy = await runBundled(
      'lazy',
      `import { ReadableStream } from 'node:stream/web';\n${PRINT_LOADED}\nconsole.log(new ReadableStream() instanceof ReadableStream);\n${PRINT_LOADED}`,
    );
    expect(lazy.split('\n')).toEqual(['false', 'true', 'true']);
    // Without the alias, the same import loads the streams as the bundle starts: what the alias saves.
    const source = path.join(work, 'eager.mjs');
    writeFileSync(source, `import { ReadableStream } from 'node:stream/web';\n${PRINT_LOADED}\nvoid ReadableStream;`);
    const { stdout } = await run(process.execPath, [source], { timeout: 30_000 });
    expect(stdout.trim()).toBe('true');
  });
});
