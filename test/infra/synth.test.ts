import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, KYC_CATCH_UP_FUNCTION } from '@shared/config/functions';
import { PAYRELAY_PROJECT_ROOT } from '@infra/payrelay';
import { stackNames } from '@infra/outputs';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { PayrelayFunction } from '@infra/payrelay-function';
import { assertHandlersExist } from './cdk-app';

/** A name only the worker's KYC gate carries (the error of shared/app/kyc-approval.ts). */
const KYC_GATE_MARKER = 'KycConfirmationUnavailableError';

const run = promisify(execFile);

/** The environment of a machine with no AWS account: no credentials, no profile, no instance metadata. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', AWS_EC2_METADATA_DISABLED: 'true' };
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'CDK_DEFAULT_ACCOUNT', 'CDK_DEFAULT_REGION']) {
    delete env[name];
  }
  env.AWS_CONFIG_FILE = path.join(tmpdir(), 'payrelay-no-aws-config');
  env.AWS_SHARED_CREDENTIALS_FILE = path.join(tmpdir(), 'payrelay-no-aws-credentials');
  return env;
}

interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

let outdir: string;
let synth: { stdout: string; stderr: string };

beforeAll(async () => {
  assertHandlersExist();
  outdir = mkdtempSync(path.join(tmpdir(), 'payrelay-synth-'));
  // The one real synth of the suite: the CLI, the app in cdk.json and esbuild bundling of every
  // handler, the optional scheduled KYC catch-up included (turned on by its context flag).
  synth = await run('npx', ['cdk', 'synth', '--no-notices', '--quiet', '-c', 'kycCatchUp=rate(1 day)', '-o', outdir], {
    cwd: PAYRELAY_PROJECT_ROOT,
    env: offlineEnv(),
    timeout: 240_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}, 240_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

function appTemplate(): Template {
  const manifest = JSON.parse(readFileSync(path.join(outdir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string; stackName?: string } }>;
  };
  const stack = Object.values(manifest.artifacts).find((a) => a.properties?.stackName === stackNames('dev').stateless);
  if (!stack?.properties?.templateFile) throw new Error(`no ${stackNames('dev').stateless} stack in ${outdir}`);
  return JSON.parse(readFileSync(path.join(outdir, stack.properties.templateFile), 'utf8')) as Template;
}

/** The deployed function of each definition: its bundle directory and its env with CloudFormation references made concrete. */
function deployedFunctions(): Array<{ id: string; bundle: string; env: Record<string, string> }> {
  const template = appTemplate();
  return [...Object.values(FUNCTIONS), KYC_CATCH_UP_FUNCTION].map((definition) => {
    const fn = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName === `payrelay-dev-${definition.id}`,
    );
    if (!fn) throw new Error(`no function ${definition.id}`);
    const key = (fn.Properties.Code as { S3Key: string }).S3Key;
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const env = Object.fromEntries(
      Object.entries(variables).map(([name, value]) => {
        if (typeof value === 'string') return [name, value];
        // A reference to the data stack: stand in a value of the same form.
        if (name.endsWith('_URL')) return [name, 'https://sqs.eu-west-1.amazonaws.com/123456789012/payrelay-dev-payouts-dlq'];
        if (name.endsWith('_SECRET_ID')) return [name, `arn:aws:secretsmanager:eu-west-1:123456789012:secret:payrelay-dev-${name}`];
        return [name, `payrelay-dev-${name.toLowerCase()}`];
      }),
    );
    return { id: definition.id, bundle: path.join(outdir, `asset.${key.replace(/\.zip$/, '')}`), env };
  });
}

describe('npm run synth', () => {
  it('succeeds offline with no AWS credentials and reports no finding', () => {
    expect(existsSync(path.join(outdir, 'manifest.json'))).toBe(true);
    expect(synth.stderr).not.toMatch(/AwsSolutions-|Validation failed/);
  });

  it('bundles every handler as a minified ESM module with a require shim and a source map', () => {
    for (const fn of deployedFunctions()) {
      const code = readFileSync(path.join(fn.bundle, 'index.mjs'), 'utf8');
      expect(code.startsWith("import { createRequire as __payrelayCreateRequire } from 'node:module';"), fn.id).toBe(true);
      expect(code).toMatch(/export\s*\{[^}]*\bhandler\b/);
      expect(existsSync(path.join(fn.bundle, 'index.mjs.map')), fn.id).toBe(true);
    }
  });

  // The contract between infra and the handlers: each bundle loads (module-scope loadConfig included)
  // with exactly the environment the template gives it, and without loading Node's web streams, which
  // no function uses at start (infra/bundling/stream-web-for-lambda.ts).
  it('each bundle loads with the environment its template gives it', async () => {
    for (const fn of deployedFunctions()) {
      const script = [
        `const m = await import(${JSON.stringify(path.join(fn.bundle, 'index.mjs'))});`,
        "if (typeof m.handler !== 'function') throw new Error('no handler export');",
        "if (process.moduleLoadList.includes('NativeModule internal/webstreams/readablestream')) throw new Error('the bundle loaded node:stream/web at start');",
      ].join(' ');
      const result = run(process.execPath, ['--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', ...fn.env },
        timeout: 30_000,
      });
      // The last lines of stderr hold the error; the lines before are minified source.
      const failure = (error: { stderr?: string }) => new Error(`${fn.id}: ${(error.stderr ?? String(error)).slice(-1500)}`);
      await expect(result.catch((error: { stderr?: string }) => Promise.reject(failure(error)))).resolves.toBeDefined();
    }
  }, 120_000);
  // A stage without KYC gating (this one) deploys a worker built without the gate
  // (shared/config/build-flags.ts): its code is not in the bundle, and KYC_GATING=on is refused at start.
  it("the worker of a stage without KYC gating carries no gate and refuses KYC_GATING=on at start", async () => {
    const worker = deployedFunctions().find((f) => f.id === FUNCTIONS.payoutWorker.id);
    if (!worker) throw new Error('no payout-worker bundle');
    expect(readFileSync(path.join(worker.bundle, 'index.mjs'), 'utf8')).not.toContain(KYC_GATE_MARKER);
    const gating = { KYC_GATING: 'on', KYC_TABLE_NAME: 'kyc', EVENTS_TABLE_NAME: 'events', KYC_SECRET_ID: 'kyc', KYC_API_BASE_URL: 'https://kyc.invalid' };
    const script = `await import(${JSON.stringify(path.join(worker.bundle, 'index.mjs'))});`;
    const start = run(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', ...worker.env, ...gating },
      timeout: 30_000,
    });
    await expect(start).rejects.toMatchObject({ stderr: expect.stringMatching(/KYC_GATING: is on, but this bundle was built without the KYC gate/) });
  }, 60_000);

  // Each bundle carries only what its function uses: the worker reads and writes one payout at a
  // time (shared/adapters/payout-item-store.ts); the reconciler and the checker add the due payouts
  // and the reversal watch (payout-sweep-store.ts), and the paged COUNT of the review gauge
  // (query-all.ts's countAll); none carries the console's listings or the callbacks' lookups by
  // reference (payout-repository.ts and what only it uses).
  it("the payout functions' bundles carry only the parts of the payouts table they use", () => {
    const sources = (id: string): string[] => {
      const fn = deployedFunctions().find((f) => f.id === id);
      if (!fn) throw new Error(`no ${id} bundle`);
      return (JSON.parse(readFileSync(path.join(fn.bundle, 'index.mjs.map'), 'utf8')) as { sources: string[] }).sources
        .map((source) => /shared\/adapters\/(payout-[a-z-]+|list-cursor|query-all)\.ts$/.exec(source)?.[1])
        .filter((name): name is string => name !== undefined)
        .sort();
    };
    expect(sources(FUNCTIONS.payoutWorker.id)).toEqual(['payout-check-queue', 'payout-item-store', 'payout-provider', 'payout-queue']);
    const sweep = ['list-cursor', 'payout-check-queue', 'payout-item-store', 'payout-provider', 'payout-sweep-store', 'query-all'];
    expect(sources(FUNCTIONS.reconciler.id)).toEqual(sweep);
    expect(sources(FUNCTIONS.payoutChecker.id)).toEqual(sweep);
  });

  it('the worker of a stage with KYC gating carries the gate', () => {
    const app = new App({ outdir: mkdtempSync(path.join(tmpdir(), 'payrelay-gated-')), context: { 'aws:cdk:enable-asset-metadata': true } });
    const stack = new Stack(app, 'PayrelayGatedWorker');
    const fn = new PayrelayFunction(stack, 'Worker', {
      definition: FUNCTIONS.payoutWorker,
      projectRoot: PAYRELAY_PROJECT_ROOT,
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
      logLevel: 'INFO',
      namePrefix: 'payrelay-gated',
      stage: 'gated',
      kycGating: true,
    });
    const template = app.synth().getStackByName(stack.stackName).template as { Resources: Record<string, { Metadata?: Record<string, string> }> };
    const asset = template.Resources[stack.getLogicalId(fn.node.defaultChild as CfnFunction)]?.Metadata?.['aws:asset:path'];
    if (!asset) throw new Error('no asset path for the gated worker');
    const bundle = readFileSync(path.join(app.outdir, asset, 'index.mjs'), 'utf8');
    rmSync(app.outdir, { recursive: true, force: true });
    expect(bundle).toContain(KYC_GATE_MARKER);
  }, 120_000);

  // The bundles carry the X-Ray SDK's Lambda build (infra/bundling/xray-sdk-for-lambda.cjs, its
  // context on infra/bundling/cls-context-for-lambda.ts): a deployed bundle, traced as Lambda runs
  // it, sends its handler segment and its captured SDK call under it to the X-Ray daemon (a UDP socket here). The secret read fails fast on a closed port.
  it('a bundle traced as in Lambda sends the handler segment and the captured SDK call to the X-Ray daemon', async () => {
    const fn = deployedFunctions().find((f) => f.id === 'kyc-callback');
    if (!fn) throw new Error('no kyc-callback bundle');
    const daemon = createSocket('udp4');
    type SegmentDocument = { id: string; name: string; parent_id?: string; subsegments?: SegmentDocument[] };
    const documents: SegmentDocument[] = [];
    daemon.on('message', (packet) => {
      const collect = (doc: SegmentDocument, parent?: SegmentDocument): void => {
        documents.push({ ...doc, parent_id: doc.parent_id ?? parent?.id });
        for (const sub of doc.subsegments ?? []) collect(sub, doc);
      };
      collect(JSON.parse(packet.toString('utf8').split('\n').slice(1).join('\n')) as SegmentDocument);
    });
    const names = (): string[] => documents.map((d) => d.name);
    await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
    // A port that was just free and is closed again: the Secrets Manager call is refused at once.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closedPort = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    try {
      const event = {
        version: '2.0',
        routeKey: 'POST /callbacks/kyc/{token}',
        rawPath: '/callbacks/kyc/token',
        headers: { 'content-type': 'application/json' },
        pathParameters: { token: 'token' },
        requestContext: { requestId: 'synth-test', http: { method: 'POST', path: '/callbacks/kyc/token', sourceIp: '127.0.0.1' } },
        body: '{}',
        isBase64Encoded: false,
      };
      const script = [
        `const { handler } = await import(${JSON.stringify(path.join(fn.bundle, 'index.mjs'))});`,
        `const context = { functionName: 'payrelay-dev-kyc-callback', awsRequestId: 'synth-test', getRemainingTimeInMillis: () => 10000 };`,
        `const response = await handler(${JSON.stringify(event)}, context);`,
        'console.error(`status ${response.statusCode}`);',
        'await new Promise((resolve) => setTimeout(resolve, 200));',
      ].join('\n');
      const { stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          PATH: process.env.PATH,
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'synth-test',
          AWS_SECRET_ACCESS_KEY: 'synth-test',
          AWS_MAX_ATTEMPTS: '1',
          AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${closedPort}`,
          ...fn.env,
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
          LAMBDA_TASK_ROOT: fn.bundle,
          _HANDLER: 'index.handler',
          _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
          AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
          AWS_XRAY_LOG_LEVEL: 'silent',
        },
        timeout: 30_000,
      });
      expect(stderr).toMatch(/status 5\d\d/);
      for (let i = 0; i < 20 && !names().includes('## index.handler'); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(names()).toEqual(expect.arrayContaining(['## index.handler', 'SecretsManager']));
      // The SDK call hangs under the handler segment: the context (AsyncLocalStorage in the bundle)
      // carried the segment the tracer set at the start of the invocation to the SDK's middleware.
      const handlerSegment = documents.find((d) => d.name === '## index.handler');
      expect(documents.find((d) => d.name === 'SecretsManager')?.parent_id).toBe(handlerSegment?.id);
    } finally {
      daemon.close();
    }
  }, 60_000);
});
