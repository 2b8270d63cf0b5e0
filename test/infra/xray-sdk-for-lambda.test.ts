import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { PAYRELAY_PROJECT_ROOT } from '@infra/payrelay';
import { BUNDLE_ALIASES, XRAY_SDK_FOR_LAMBDA } from '@infra/payrelay-function';

/*
 * The X-Ray SDK build the Lambda bundles carry (PayrelayFunction aliases `aws-xray-sdk-core` to it)
 * against the installed package and the installed Powertools tracer, so an upgrade of either that
 * needs a member it left out fails here, not in a deployed function.
 */

type Sdk = Record<string, unknown>;
const load = createRequire(import.meta.url);
const full = load('aws-xray-sdk-core') as Sdk;
const forLambda = load(path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA)) as Sdk;

/** What the build leaves out: the AWS SDK v2 and global HTTP/promise patchers, plugins, framework middleware. */
const LEFT_OUT = ['plugins', 'config', 'captureAWS', 'captureAWSClient', 'captureHTTPs', 'captureHTTPsGlobal', 'capturePromise', 'database', 'middleware'];

/** The members the Powertools tracer takes from the SDK (`const { a, b: c } = xraySdk` and `xraySdk.a`). */
function membersPowertoolsTakes(): string[] {
  const dir = path.join(PAYRELAY_PROJECT_ROOT, 'node_modules/@aws-lambda-powertools/tracer/lib/esm');
  const members = new Set<string>();
  for (const file of ['Tracer.js', 'provider/ProviderService.js']) {
    const code = readFileSync(path.join(dir, file), 'utf8');
    expect(code, file).toMatch(/import xraySdk from 'aws-xray-sdk-core'/);
    for (const [, list] of code.matchAll(/const\s*\{([^}]*)\}\s*=\s*xraySdk\b/g)) {
      for (const entry of (list ?? '').split(',')) {
        const name = entry.split(':')[0]?.trim();
        if (name) members.add(name);
      }
    }
    for (const [, name] of code.matchAll(/\bxraySdk\.(\w+)/g)) members.add(name ?? '');
  }
  return [...members];
}

describe("the X-Ray SDK's Lambda build", () => {
  it("keeps each member of the package's entry as the package's own object, or leaves it out with a clear error", () => {
    for (const name of Object.keys(full)) {
      if (!LEFT_OUT.includes(name)) {
        expect(forLambda[name], name).toBe(full[name]);
        continue;
      }
      const member = forLambda[name];
      if (member === undefined) continue;
      expect(typeof member, name).toBe('function');
      expect(() => (member as () => void)(), name).toThrow(/left out of payrelay's Lambda build of the X-Ray SDK/);
    }
    expect(Object.keys(forLambda).filter((name) => !(name in full))).toEqual([]);
  });

  it('gives the Powertools tracer every member it calls with payrelay settings, as the package has it', () => {
    const taken = membersPowertoolsTakes();
    // Powertools destructures the v2 client patchers and the global HTTP patcher at load, and calls
    // the latter only with captureHTTPsRequests on, which shared/observability/tracer.ts turns off.
    const neverCalled = ['captureAWS', 'captureAWSClient', 'captureHTTPsGlobal'];
    expect(taken).toEqual(expect.arrayContaining(['captureAWSv3Client', 'getSegment', 'setSegment', 'Subsegment', ...neverCalled]));
    for (const name of taken) {
      if (neverCalled.includes(name)) expect(typeof forLambda[name], name).toBe('function');
      else expect(forLambda[name], name).toBe(full[name]);
    }
  });

  it('bundles without the AWS SDK v2 patcher, semver, the plugins, the global HTTP and promise patchers and cls-hooked', async () => {
    // As PayrelayFunction bundles it: from the project root, with the construct's aliases.
    const { metafile } = await build({
      entryPoints: [path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA)],
      absWorkingDir: PAYRELAY_PROJECT_ROOT,
      alias: { ...BUNDLE_ALIASES },
      bundle: true,
      platform: 'node',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(metafile.inputs);
    expect(inputs).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/aws-xray-sdk-core\/dist\/lib\/patchers\/aws3_p\.js$/),
        expect.stringMatching(/infra\/bundling\/cls-context-for-lambda\.ts$/),
      ]),
    );
    const leftOut = /\/semver\/|patchers\/(aws_p|http_p|promise_p)\.js$|segments\/plugins\/|\/(cls-hooked|emitter-listener|shimmer)\//;
    expect(inputs.filter((file) => leftOut.test(file))).toEqual([]);
  });
});
