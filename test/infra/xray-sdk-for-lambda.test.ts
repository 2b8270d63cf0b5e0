import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { promisify } from 'node:util';
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

const run = promisify(execFile);

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

  // The Lambda set-up (xray-lambda-setup.cjs) repeats the package's without its sampling client:
  // each runs in a fresh process as Lambda starts one, then goes through three invocations' trace
  // headers (sampled, a new unsampled one, none); what each leaves behind must be the same.
  it("sets Lambda up as the package's own entry does: the same facade segment, invocation after invocation", async () => {
    const lib = path.join(PAYRELAY_PROJECT_ROOT, 'node_modules/aws-xray-sdk-core/dist/lib');
    const script = (entry: string) => `
      const sdk = require(${JSON.stringify(entry)});
      const contextUtils = require(${JSON.stringify(path.join(lib, 'context_utils'))});
      const segmentUtils = require(${JSON.stringify(path.join(lib, 'segments/segment_utils'))});
      const emitter = require(${JSON.stringify(path.join(lib, 'segment_emitter'))});
      const facade = () => {
        const s = sdk.getSegment();
        const { trace_id, id, notTraced, facade, in_progress, counter, name } = s;
        return { trace_id, id, notTraced, facade, in_progress, counter, name, closed: s.isClosed(), subsegments: (s.subsegments || []).length };
      };
      const seen = { start: facade() };
      const sub = sdk.getSegment().addNewSubsegment('call');
      seen.subsegment = { name: sub.name, underFacade: sub.parent === sdk.getSegment(), notTraced: sub.notTraced };
      seen.refused = sdk.getSegment().addAnnotation('k', 'v');
      seen.sameInvocation = facade();
      process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272794;Parent=53995c3f42cd8ad9;Sampled=0';
      seen.next = facade();
      delete process.env._X_AMZN_TRACE_ID;
      seen.none = facade();
      seen.methods = Object.keys(sdk.getSegment()).filter((k) => typeof sdk.getSegment()[k] === 'function').sort()
        .map((k) => k + ':' + sdk.getSegment()[k].name);
      seen.streamingThreshold = segmentUtils.getStreamingThreshold();
      seen.temporarySocket = emitter.useBatchingTemporarySocket;
      seen.manualMode = String(contextUtils.enableManualMode).includes('does not support');
      console.log(JSON.stringify(seen));`;
    const env = {
      PATH: process.env.PATH,
      LAMBDA_TASK_ROOT: PAYRELAY_PROJECT_ROOT,
      AWS_XRAY_LOG_LEVEL: 'silent',
      _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    };
    const setUp = async (entry: string) => JSON.parse((await run(process.execPath, ['-e', script(entry)], { env })).stdout) as Record<string, unknown>;
    const [packaged, ours] = await Promise.all([setUp('aws-xray-sdk-core'), setUp(path.join(PAYRELAY_PROJECT_ROOT, XRAY_SDK_FOR_LAMBDA))]);
    expect(ours).toEqual(packaged);
    expect(ours).toMatchObject({
      start: { trace_id: '1-5759e988-bd862e3fe1be46a994272793', id: '53995c3f42cd8ad8', facade: true, closed: true },
      subsegment: { name: 'call', underFacade: true },
      sameInvocation: { subsegments: 1 },
      next: { trace_id: '1-5759e988-bd862e3fe1be46a994272794', id: '53995c3f42cd8ad9', notTraced: true },
      none: { id: '00000000', notTraced: true },
      streamingThreshold: 0,
      temporarySocket: true,
      manualMode: true,
    });
  });

  it('bundles without the AWS SDK v2 patcher, semver, the plugins, the global HTTP and promise patchers, the middleware with its sampling client and cls-hooked', async () => {
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
    const leftOut = /\/semver\/|patchers\/(aws_p|http_p|promise_p)\.js$|segments\/plugins\/|\/middleware\/|\/(cls-hooked|emitter-listener|shimmer)\//;
    expect(inputs.filter((file) => leftOut.test(file))).toEqual([]);
  });
});
