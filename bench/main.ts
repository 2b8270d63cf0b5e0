import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { baselineProblem } from './lib/cold-baseline';
import { currentLoad, machineInfo } from './lib/machine';
import type { BenchOptions, Part, PartResult } from './lib/part';
import { renderNotes, renderTable } from './lib/report';
import { buildSummary } from './lib/summary';

/*
 * `npm run bench`: payrelay's benchmarks. Each part runs in its own Node process (fresh module
 * state, its own emulators, handler logs kept off the terminal); this process collects the
 * results and prints one table.
 */

const PARTS: Record<string, () => Promise<Part>> = {
  ingest: async () => (await import('./parts/ingest')).ingest,
  'cold-start': async () => (await import('./parts/cold-start')).coldStart,
  throughput: async () => (await import('./parts/throughput')).throughput,
  reconcile: async () => (await import('./parts/reconcile')).reconcile,
  cost: async () => (await import('./parts/cost')).cost,
  load: async () => (await import('./parts/load')).load,
  enqueue: async () => (await import('./parts/enqueue')).enqueue,
  console: async () => (await import('./parts/console')).consolePages,
  'time-to-final': async () => (await import('./parts/time-to-final')).timeToFinal,
};
const PART_NAMES = Object.keys(PARTS);
const CHILD_ENV = 'PAYRELAY_BENCH_CHILD';

const positiveInt = (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number');
  return n;
};
const intList = (value: string): number[] => value.split(',').map((v) => positiveInt(v.trim()));
const partList = (value: string): string[] => {
  const names = value.split(',').map((v) => v.trim());
  const unknown = names.filter((n) => !PART_NAMES.includes(n));
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown part ${unknown.join(', ')}; parts: ${PART_NAMES.join(', ')}`);
  return names;
};

/** Message from a part's process. */
type ChildMessage = { type: 'progress'; line: string } | { type: 'result'; result: PartResult } | { type: 'error'; message: string };

async function runChild(): Promise<void> {
  const send = (message: ChildMessage): void => {
    process.send?.(message);
  };
  const name = process.env[CHILD_ENV] as string;
  const options = JSON.parse(process.env.PAYRELAY_BENCH_OPTIONS ?? '{}') as BenchOptions;
  try {
    const part = await (PARTS[name] as () => Promise<Part>)();
    const started = Date.now();
    const result = await part({ options, progress: (line) => send({ type: 'progress', line }) });
    send({ type: 'result', result: { ...result, seconds: (Date.now() - started) / 1000 } });
  } catch (error) {
    send({ type: 'error', message: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error) });
  }
  // Emulators and keep-alive sockets may hold the loop open; the result is out, so leave.
  process.disconnect?.();
  setTimeout(() => process.exit(0), 100).unref();
}

/** Runs one part in a fresh Node process (same loader as this one) and returns its result. */
function runPart(name: string, options: BenchOptions): Promise<PartResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, [CHILD_ENV]: name, PAYRELAY_BENCH_OPTIONS: JSON.stringify(options) },
      // Handler logs (Powertools JSON on stdout/stderr) are part of the work measured but not of the report.
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderrTail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-8000);
    });
    let result: PartResult | undefined;
    let failure: string | undefined;
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'progress') process.stderr.write(`  ${message.line}\n`);
      else if (message.type === 'result') result = message.result;
      else failure = message.message;
    });
    child.on('exit', (code, signal) => {
      if (result) return resolve(result);
      const tail = stderrTail
        .split('\n')
        .filter((l) => !l.startsWith('{'))
        .join('\n')
        .trim();
      reject(new Error(`part ${name} failed (exit ${code ?? signal}): ${failure ?? '(no message)'}${tail ? `\n${tail}` : ''}`));
    });
  });
}

async function main(): Promise<void> {
  const program = new Command('npm run bench --')
    .description(
      'payrelay benchmarks: each figure side by side with its floor, measured in the same run. Prints a Markdown table; see docs/performance.md.',
    )
    .addOption(new Option('--only <parts>', `run only these parts (comma-separated): ${PART_NAMES.join(', ')}`).argParser(partList))
    .option('--json [file]', 'write the results as JSON to <file>; without a file, print JSON instead of the table')
    .option('--full', 'bigger samples: more webhooks, cold starts and payouts (about twice as long)')
    .addOption(new Option('--ingest-iterations <n>', 'measured webhooks per variant (default: 1000; 3000 with --full)').argParser(positiveInt))
    .addOption(new Option('--cold-runs <n>', 'fresh Node processes per bundle (default: 15; 25 with --full)').argParser(positiveInt))
    .option(
      '--cold-baseline <dir>',
      "a checkout of another commit with its dependencies installed (npm ci): the cold-start part builds that commit's bundles with its own construct and measures them in the same rounds, to show whether a change made cold start worse",
    )
    .addOption(new Option('--payouts <n>', 'payouts through the worker per latency (default: 300; 1000 with --full)').argParser(positiveInt))
    .addOption(new Option('--latency-ms <list>', 'simulator latency per provider call, L (ms); a list runs the throughput part once per value').argParser(intList).default([100, 500], '100,500'))
    .addOption(new Option('--concurrency <n>', 'worker concurrency C (WORKER_CONCURRENCY, and the SQS batch size)').argParser(positiveInt).default(10))
    .addOption(new Option('--batch-size <n>', 'SQS batch size of the throughput part (default: the concurrency; the deployed default is 5)').argParser(positiveInt))
    .addOption(new Option('--reconcile-final <list>', 'final payout counts to compare (default: 1000,100000)').argParser(intList))
    .addOption(new Option('--reconcile-open <n>', 'open payouts in each reconcile run').argParser(positiveInt).default(100))
    .addOption(new Option('--reconcile-runs <n>', 'reconcile runs per size').argParser(positiveInt).default(5))
    .addOption(new Option('--final-payouts <n>', 'payouts per settle time in the time-to-final part (default: 40; 100 with --full)').argParser(positiveInt))
    .addOption(new Option('--cost-webhooks <n>', 'webhooks counted for the cost figures').argParser(positiveInt).default(200))
    .addOption(new Option('--cost-payouts <n>', 'payouts counted for the cost figures').argParser(positiveInt).default(100))
    .addOption(new Option('--load-requests <n>', 'requests of the load test').argParser(positiveInt).default(20_000))
    .addOption(new Option('--load-concurrency <n>', 'requests in flight in the load test').argParser(positiveInt).default(32))
    .addOption(new Option('--load-max-seconds <n>', 'the load test stops after this long whatever the count').argParser(positiveInt).default(180))
    .addOption(new Option('--enqueue-rows <n>', "rows of the enqueue part's file, for the CLI and for its floor (default: 20000; 50000 with --full)").argParser(positiveInt))
    .addOption(new Option('--enqueue-file-mb <n>', 'size of the file whose check the enqueue part measures peak RSS on').argParser(positiveInt).default(50))
    .addOption(new Option('--console-payouts <n>', 'payouts stored for the console part').argParser(positiveInt).default(100_000))
    .addOption(new Option('--console-callbacks <n>', 'callbacks stored for the console part, over the last 3 days').argParser(positiveInt).default(100_000))
    .addOption(new Option('--log-level <level>', 'POWERTOOLS_LOG_LEVEL of the handlers').choices(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'))
    .showHelpAfterError();
  program.parse(process.argv);
  const o = program.opts();
  const baselineError = o.coldBaseline ? baselineProblem(resolve(String(o.coldBaseline))) : undefined;
  if (baselineError) program.error(baselineError);
  const full = Boolean(o.full);
  const options: BenchOptions = {
    ingestIterations: o.ingestIterations ?? (full ? 3000 : 1000),
    coldRuns: o.coldRuns ?? (full ? 25 : 15),
    ...(o.coldBaseline ? { coldBaseline: resolve(String(o.coldBaseline)) } : {}),
    payouts: o.payouts ?? (full ? 1000 : 300),
    finalPayouts: o.finalPayouts ?? (full ? 100 : 40),
    latenciesMs: o.latencyMs,
    concurrency: o.concurrency,
    batchSize: o.batchSize ?? o.concurrency,
    reconcileFinal: o.reconcileFinal ?? [1000, 100_000],
    reconcileOpen: o.reconcileOpen,
    reconcileRuns: o.reconcileRuns,
    costWebhooks: o.costWebhooks,
    costPayouts: o.costPayouts,
    loadRequests: o.loadRequests,
    loadConcurrency: o.loadConcurrency,
    loadMaxSeconds: o.loadMaxSeconds,
    consolePayouts: o.consolePayouts,
    consoleCallbacks: o.consoleCallbacks,
    logLevel: o.logLevel,
    enqueueRows: o.enqueueRows ?? (full ? 50_000 : 20_000),
    enqueueFileMiB: o.enqueueFileMb,
  };
  const selected: string[] = o.only ?? PART_NAMES;
  const machine = machineInfo();
  process.stderr.write(
    `payrelay bench on ${machine.cpus} x ${machine.cpuModel}, Node ${machine.node}, load ${machine.loadAtStart.join(' ')}; parts: ${selected.join(', ')}\n`,
  );

  const started = Date.now();
  const results: PartResult[] = [];
  const failures: Array<{ part: string; error: string }> = [];
  for (const name of selected) {
    process.stderr.write(`${name}...\n`);
    try {
      results.push(await runPart(name, options));
    } catch (error) {
      const message = (error as Error).message;
      failures.push({ part: name, error: message });
      process.stderr.write(`${message}\n`);
    }
  }
  machine.loadAtEnd = currentLoad();
  const report = { summary: buildSummary(results), machine, options, totalSeconds: (Date.now() - started) / 1000, results, failures };

  if (o.json === true) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    if (typeof o.json === 'string') writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${renderTable(results)}\n\n${renderNotes(results)}\n\n`);
    process.stdout.write(
      `machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}; ${machine.date}; load average ${machine.loadAtStart.join(' ')} at start, ${machine.loadAtEnd.join(' ')} at end; ${report.totalSeconds.toFixed(0)} s in all\n`,
    );
  }
  if (failures.length > 0) process.exitCode = 1;
}

if (process.env[CHILD_ENV]) await runChild();
else await main();
