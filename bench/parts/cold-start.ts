import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { PayrelayFunction } from '@infra/payrelay-function';
import { FUNCTIONS, KYC_CATCH_UP_FUNCTION, type FunctionDefinition } from '@shared/config/functions';
import { METRICS_NAMESPACE, METRICS_SERVICE } from '@shared/observability/metric-names';
import { bytesByPackage } from '../lib/bundle-contents';
import { baselineFiles, baselineProblem } from '../lib/cold-baseline';
import { verdict, type Part, type PartResult, type Row } from '../lib/part';
import { bytes, median, ms, ratio } from '../lib/stats';

export const COLD_START_TARGET = 1.5;
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROBE = fileURLToPath(new URL('../cold-start/import-probe.mjs', import.meta.url));
const FLOOR_ID = 'dynamodb-client-only';
const FRAMEWORK_ID = 'worker-libraries-only';

/** The floor goes through the same construct; its id is outside the project's function ids on purpose. */
const FLOOR_DEFINITION = {
  id: FLOOR_ID,
  entry: 'bench/cold-start/dynamodb-only.ts',
  timeoutSeconds: 10,
  memoryMb: 256,
  callsProvider: false,
} as unknown as FunctionDefinition;

/** The worker's libraries without payrelay's code (bench/cold-start/framework-only.ts): a second reference. */
const FRAMEWORK_DEFINITION = { ...FLOOR_DEFINITION, id: FRAMEWORK_ID, entry: 'bench/cold-start/framework-only.ts' } as unknown as FunctionDefinition;

/** The reference bundles, which are not payrelay functions: no row, verdict or worst ratio of their own. */
const REFERENCE_IDS: ReadonlySet<string> = new Set([FLOOR_ID, FRAMEWORK_ID]);

/** The id prefix of the bundles built from --cold-baseline's checkout. */
const BASELINE_PREFIX = 'baseline:';

/** A bundle that is not one of this checkout's functions (a reference, or the baseline's). */
function isReference(id: string): boolean {
  return REFERENCE_IDS.has(id) || id.startsWith(BASELINE_PREFIX);
}

const BASELINE_MARK = 'PAYRELAY_BASELINE_BUNDLES=';

/**
 * Builds the function bundles of another checkout (--cold-baseline) with that checkout's own
 * construct: its bench's synthesizeBundles, run by its own tsx in its own directory (its tsconfig,
 * its node_modules). Its reference bundles are left out: every ratio of the run is paired with this
 * checkout's floor.
 */
function synthesizeBaselineBundles(dir: string, outdir: string): Promise<Bundle[]> {
  const { entry, tsx } = baselineFiles(dir);
  const problem = baselineProblem(dir);
  if (problem) return Promise.reject(new Error(problem));
  const script = join(outdir, 'synthesize-baseline.mts');
  writeFileSync(
    script,
    [
      `const { synthesizeBundles } = await import(${JSON.stringify(pathToFileURL(entry).href)});`,
      `const bundles = synthesizeBundles(${JSON.stringify(join(outdir, 'cdk.out'))});`,
      `process.stdout.write(${JSON.stringify(BASELINE_MARK)} + JSON.stringify(bundles) + '\\n');`,
    ].join('\n'),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(tsx, [script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('exit', (code) => {
      const line = stdout.split('\n').find((l) => l.startsWith(BASELINE_MARK));
      if (code !== 0 || !line) {
        reject(new Error(`--cold-baseline ${dir}: building its bundles failed (exit ${code}): ${stderr.slice(-1500)}`));
        return;
      }
      const bundles = JSON.parse(line.slice(BASELINE_MARK.length)) as Bundle[];
      resolve(bundles.filter((b) => !REFERENCE_IDS.has(b.id)).map((b) => ({ ...b, id: `${BASELINE_PREFIX}${b.id}` })));
    });
  });
}

/** Dummy values for every variable a handler validates at module load (docs/architecture.md). */
const HANDLER_ENV: Record<string, string> = {
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  PAYOUTS_TABLE_NAME: 'payrelay-bench-payouts',
  EVENTS_TABLE_NAME: 'payrelay-bench-events',
  KYC_TABLE_NAME: 'payrelay-bench-kyc',
  QUARANTINE_TABLE_NAME: 'payrelay-bench-quarantine',
  COLLECTIONS_TABLE_NAME: 'payrelay-bench-collections',
  PAYOUTS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/000000000000/payrelay-bench-payouts',
  PAYOUTS_DLQ_URL: 'https://sqs.eu-west-1.amazonaws.com/000000000000/payrelay-bench-payouts-dlq',
  PAYOUT_CHECKS_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/000000000000/payrelay-bench-payout-checks',
  PROVIDER_SECRET_ID: 'payrelay-bench-provider',
  KYC_SECRET_ID: 'payrelay-bench-kyc',
  ACCOUNT_KEY_SECRET_ID: 'payrelay-bench-account-key',
  PAYOUT_API_BASE_URL: 'https://payout.provider.invalid',
  KYC_API_BASE_URL: 'https://kyc.provider.invalid',
  // What PayrelayFunction sets on every function.
  POWERTOOLS_SERVICE_NAME: METRICS_SERVICE,
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  POWERTOOLS_LOG_LEVEL: 'INFO',
  PAYRELAY_STAGE: 'bench',
  NODE_OPTIONS: '--enable-source-maps',
};

/**
 * What the Lambda runtime sets in every function's environment and a function's start reads:
 * AWS_EXECUTION_ENV makes the tracer load the X-Ray SDK, and LAMBDA_TASK_ROOT makes the SDK run its
 * Lambda set-up (infra/bundling/xray-sdk-for-lambda.cjs), as both do on Lambda.
 */
const LAMBDA_ENV = { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x', AWS_LAMBDA_FUNCTION_NAME: 'payrelay-bench', LAMBDA_TASK_ROOT: tmpdir() };

/**
 * The two ways a function starts. Deployed, X-Ray is on, so the tracer and the X-Ray SDK load; with
 * POWERTOOLS_TRACE_ENABLED=false (or outside Lambda) they are never loaded
 * (shared/observability/tracer.ts).
 */
const MODES = {
  traced: { label: 'X-Ray on (as deployed)', env: LAMBDA_ENV },
  untraced: { label: 'X-Ray off', env: { ...LAMBDA_ENV, POWERTOOLS_TRACE_ENABLED: 'false' } },
} as const;
type Mode = keyof typeof MODES;

export interface Bundle {
  readonly id: string;
  readonly file: string;
  readonly bytes: number;
  readonly sourceMapBytes: number;
}

/**
 * Synthesizes a stack holding one PayrelayFunction per function of shared/config/functions.ts (plus
 * the floor): the construct runs the same esbuild bundling the CDK app runs at `cdk synth`, with the
 * options it holds, and writes each bundle to a cdk.out asset folder, found here through the
 * template's aws:asset:path metadata.
 */
export function synthesizeBundles(outdir: string): Bundle[] {
  const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
  const stack = new Stack(app, 'PayrelayBenchBundles');
  const definitions: FunctionDefinition[] = [...Object.values(FUNCTIONS), KYC_CATCH_UP_FUNCTION, FLOOR_DEFINITION, FRAMEWORK_DEFINITION];
  const logicalIds = new Map<string, string>();
  for (const definition of definitions) {
    const fn = new PayrelayFunction(stack, `Fn-${definition.id}`, {
      definition,
      projectRoot: REPO_ROOT,
      logRetention: RetentionDays.ONE_WEEK,
      logRemovalPolicy: RemovalPolicy.DESTROY,
      logLevel: 'INFO',
      namePrefix: 'payrelay-bench',
      stage: 'bench',
    });
    logicalIds.set(definition.id, stack.getLogicalId(fn.node.defaultChild as CfnFunction));
  }
  const assembly = app.synth();
  const template = assembly.getStackByName(stack.stackName).template as {
    Resources: Record<string, { Metadata?: Record<string, string> }>;
  };
  return definitions.map((definition) => {
    const logicalId = logicalIds.get(definition.id) as string;
    const assetPath = template.Resources[logicalId]?.Metadata?.['aws:asset:path'];
    if (!assetPath) throw new Error(`no asset path for ${definition.id} in the synthesized template`);
    const file = join(outdir, assetPath, 'index.mjs');
    let sourceMapBytes = 0;
    try {
      sourceMapBytes = statSync(`${file}.map`).size;
    } catch {
      sourceMapBytes = 0;
    }
    return { id: definition.id, file, bytes: statSync(file).size, sourceMapBytes };
  });
}

/** One import of a bundle in a fresh process: wall time and the process's CPU time over it (ms). */
export interface ImportTime {
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** Imports `file` in a fresh Node process started as `mode` says and returns the times measured inside it. */
export function importTime(file: string, mode: Mode = 'traced'): Promise<ImportTime> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PROBE, file], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? '', ...HANDLER_ENV, ...MODES[mode].env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('exit', (code) => {
      const wall = /PAYRELAY_IMPORT_MS=([\d.]+)/.exec(stderr);
      const cpu = /PAYRELAY_IMPORT_CPU_MS=([\d.]+)/.exec(stderr);
      if (code === 0 && wall && cpu) resolve({ wallMs: Number(wall[1]), cpuMs: Number(cpu[1]) });
      else reject(new Error(`importing ${file} failed (exit ${code}): ${stderr.slice(-2000)}`));
    });
  });
}

export const coldStart: Part = async ({ options, progress }): Promise<PartResult> => {
  const outdir = mkdtempSync(join(tmpdir(), 'payrelay-bench-cdk-'));
  try {
    progress('cold-start: synthesizing the functions with PayrelayFunction (esbuild bundling)');
    const synthStarted = Date.now();
    const own = synthesizeBundles(outdir);
    const synthSeconds = (Date.now() - synthStarted) / 1000;
    const baselineDir = options.coldBaseline;
    if (baselineDir) progress(`cold-start: building the bundles of ${baselineDir} with its own construct`);
    const bundles = baselineDir ? [...own, ...(await synthesizeBaselineBundles(baselineDir, mkdtempSync(join(outdir, 'baseline-'))))] : own;
    const modes = Object.keys(MODES) as Mode[];
    const key = (id: string, mode: Mode): string => `${id}/${mode}`;
    const times = new Map<string, ImportTime[]>(bundles.flatMap((b) => modes.map((mode) => [key(b.id, mode), []] as [string, ImportTime[]])));
    // Round-robin over the bundles and modes so machine noise spreads over all of them alike.
    for (let run = 0; run < options.coldRuns; run += 1) {
      for (const bundle of bundles) {
        for (const mode of modes) (times.get(key(bundle.id, mode)) as ImportTime[]).push(await importTime(bundle.file, mode));
      }
      progress(`cold-start: run ${run + 1}/${options.coldRuns}`);
    }
    const floor = bundles.find((b) => b.id === FLOOR_ID) as Bundle;
    // The floor never loads the tracer: both modes are samples of the same thing.
    const floorSamples = modes.flatMap((mode) => times.get(key(FLOOR_ID, mode)) as ImportTime[]);
    const floorWallMs = median(floorSamples.map((t) => t.wallMs));
    const floorCpuMs = median(floorSamples.map((t) => t.cpuMs));
    // The floor of each round (its two imports averaged): a function's sample is divided by the floor
    // measured moments apart, so the load of the shared machine, which drifts over a run of minutes,
    // cancels out of the ratio instead of moving it by ±0.2.
    const floorRounds = (pick: (t: ImportTime) => number): number[] =>
      Array.from({ length: options.coldRuns }, (_, run) => {
        const round = modes.map((mode) => (times.get(key(FLOOR_ID, mode)) as ImportTime[])[run] as ImportTime);
        return round.reduce((sum, t) => sum + pick(t), 0) / round.length;
      });
    const floorCpuByRound = floorRounds((t) => t.cpuMs);
    const floorWallByRound = floorRounds((t) => t.wallMs);
    const pairedRatio = (samples: ImportTime[], pick: (t: ImportTime) => number, floorByRound: number[]): number =>
      median(samples.map((t, run) => pick(t) / (floorByRound[run] as number)));
    const rows: Row[] = [];
    const figures = bundles.map((bundle) => {
      const byMode = Object.fromEntries(
        modes.map((mode) => {
          const samples = times.get(key(bundle.id, mode)) as ImportTime[];
          const importMs = median(samples.map((t) => t.wallMs));
          const cpuMs = median(samples.map((t) => t.cpuMs));
          return [
            mode,
            {
              importMs,
              cpuMs,
              ratio: pairedRatio(samples, (t) => t.cpuMs, floorCpuByRound),
              wallRatio: pairedRatio(samples, (t) => t.wallMs, floorWallByRound),
              samples,
            },
          ];
        }),
      ) as Record<Mode, { importMs: number; cpuMs: number; ratio: number; wallRatio: number; samples: ImportTime[] }>;
      const packages = bytesByPackage(bundle.file).slice(0, 10);
      return { id: bundle.id, bytes: bundle.bytes, sourceMapBytes: bundle.sourceMapBytes, ...byMode, packages };
    });
    const largest = (f: (typeof figures)[number]): string =>
      f.packages
        .slice(0, 3)
        .map((p) => `${p.pkg} ${bytes(p.bytes)}`)
        .join(', ');
    for (const f of figures) {
      if (isReference(f.id)) continue;
      for (const mode of modes) {
        rows.push({
          metric: `${f.id}, ${MODES[mode].label}: bundle size, import CPU time (wall time), medians`,
          value: `${bytes(f.bytes)}, ${ms(f[mode].cpuMs)} (${ms(f[mode].importMs)}, ${ratio(f[mode].wallRatio)})`,
          reference: `floor ${bytes(floor.bytes)}, ${ms(floorCpuMs)} (${ms(floorWallMs)})`,
          ratio: ratio(f[mode].ratio),
          target: `<= ${COLD_START_TARGET}x`,
          verdict: verdict(f[mode].ratio <= COLD_START_TARGET),
        });
      }
      rows.push({
        metric: `${f.id}: largest packages in the bundle`,
        value: largest(f),
        verdict: 'info',
      });
    }
    const framework = figures.find((f) => f.id === FRAMEWORK_ID) as (typeof figures)[number];
    const worker = figures.find((f) => f.id === FUNCTIONS.payoutWorker.id) as (typeof figures)[number];
    rows.push({
      metric: "the worker's libraries alone, wired as the worker wires them, none of payrelay's code (bench/cold-start/framework-only.ts): bundle size; ratio X-Ray on (off)",
      value: `${bytes(framework.bytes)}; ${ratio(framework.traced.ratio)} (${ratio(framework.untraced.ratio)})`,
      reference: `payout-worker ${ratio(worker.traced.ratio)} (${ratio(worker.untraced.ratio)}): payrelay's own code adds ${(worker.traced.ratio - framework.traced.ratio).toFixed(2)}x (${(worker.untraced.ratio - framework.untraced.ratio).toFixed(2)}x)`,
      ratio: ratio(framework.traced.ratio),
      verdict: 'info',
    });
    const worst = (mode: Mode): number => Math.max(...figures.filter((f) => !isReference(f.id)).map((f) => f[mode].ratio));
    // Against the baseline checkout: each function both have, this checkout's ratio minus the baseline's.
    const deltas: number[] = [];
    for (const before of figures.filter((f) => f.id.startsWith(BASELINE_PREFIX))) {
      const id = before.id.slice(BASELINE_PREFIX.length);
      const now = figures.find((f) => f.id === id);
      if (!now) continue;
      deltas.push(now.traced.ratio - before.traced.ratio);
      rows.push({
        metric: `${id}: the baseline checkout → this one, X-Ray on as deployed (off)`,
        value: `${ratio(before.traced.ratio)} → ${ratio(now.traced.ratio)} (${ratio(before.untraced.ratio)} → ${ratio(now.untraced.ratio)})`,
        reference: `${bytes(before.bytes)} → ${bytes(now.bytes)}; ${baselineDir ?? ''}`,
        ratio: `${now.traced.ratio >= before.traced.ratio ? '+' : ''}${(now.traced.ratio - before.traced.ratio).toFixed(3)}`,
        verdict: 'info',
      });
    }
    return {
      part: 'cold-start',
      title: '2. Cold start (the CDK bundles, import in a fresh Node process)',
      rows,
      data: { runs: options.coldRuns, synthSeconds, bundles: figures },
      summary: {
        coldStartRatio: worst('traced'),
        coldStartRatioUntraced: worst('untraced'),
        coldStartFrameworkRatio: framework.traced.ratio,
        ...(deltas.length > 0 ? { coldStartBaselineDelta: Math.max(...deltas) } : {}),
      },
      notes: [
        `Bundles built by PayrelayFunction (infra/payrelay-function.ts) at synth (${synthSeconds.toFixed(0)} s for ${bundles.length} bundles): ESM, minified, node24 target, source maps, AWS SDK bundled. Size is index.mjs without its .map.`,
        `Import time: \`await import(bundle)\` timed inside a fresh \`node\` process with NODE_OPTIONS=--enable-source-maps, AWS_EXECUTION_ENV and LAMBDA_TASK_ROOT set (as on Lambda) and dummy handler env; median of ${options.coldRuns} processes per bundle and mode, round-robin. "X-Ray on" is how the functions are deployed (the tracer and the X-Ray SDK load at init); "X-Ray off" is POWERTOOLS_TRACE_ENABLED=false, how a stage deployed with \`tracing: false\` starts, where they are never loaded. The ratio is on CPU time (user + system of the process during the import): an import is CPU-bound, and on a shared machine wall time mostly measures the other processes (wall ratio in brackets). It is the median over the rounds of each import divided by the floor's in the same round, so a load that drifts during the run cancels out; the times shown are plain medians.`,
        'Floor: a handler that imports only @aws-sdk/client-dynamodb and builds the client, bundled by the same construct (its median over both modes). Node start-up itself is outside both figures. kyc-catch-up is deployed only when a stage sets kycCatchUp.',
        ...(baselineDir
          ? [
              `Baseline: the bundles of ${baselineDir}, built by that checkout's own construct and measured in the same rounds, each paired with this checkout's floor; a function both have shows the baseline's ratio → this one's, and the difference (X-Ray on). Differences within about ±0.03 are the run-to-run spread of a ratio.`,
            ]
          : []),
        "Worker's libraries alone: a second reference bundle, measured like the functions, that builds at module load what the payout worker builds from packages (the tracer when tracing is on, the Secrets Manager client, Powertools logger, metrics, parameters and batch, middy with the worker's three middlewares, valibot; its DynamoDB and SQS clients, like the worker's, are built at their first send) with one schema and none of payrelay's code. The worker's ratio minus its ratio is what payrelay's own code adds at start.",
        `Largest packages come from the bundle's source map (generated bytes per npm package). Floor: ${largest(figures.find((f) => f.id === FLOOR_ID) as (typeof figures)[number])}.`,
        'Local Node 20 stands in for the Lambda nodejs24.x runtime; the Lambda init phase also downloads and unpacks the code, which grows with bundle size.',
      ],
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
};
