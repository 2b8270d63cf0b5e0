import { Command, CommanderError, InvalidArgumentError } from 'commander';
import Table from 'cli-table3';
import { DEFAULT_RECONCILE_EVERY_MINUTES, LOCAL_APPLY_EVERY_MS, LOCAL_APPLY_IDLE_MAX_MS } from '@shared/config/functions';
import { loadLocalConfig, LOCAL_CONFIG_PATH } from './config';
import { isolateConcurrentInvocations } from './lambda';
import { reconcileEverySeconds, startLocalStack, type LocalStack } from './stack';
import { portArg, providerBaseUrl } from './option-args';
import { LOCAL_STATE_PATH } from './state';
import { tableStyle } from './terminal';

/*
 * `npm start`: the whole of payrelay on 127.0.0.1. Flags override local/config.json; the env
 * variables PAYRELAY_PORT, PAYRELAY_SIMULATOR_PORT, PAYRELAY_PROVIDER_URL and PAYRELAY_KYC_URL do too.
 */

const secondsArg = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
};
/** Exit codes as the `payrelay` CLI's (docs/cli.md, "Exit codes"): the command line itself (an unknown flag, a missing value), and a value a flag or env variable refuses. */
const EXIT_USAGE = 2;
const EXIT_INVALID_INPUT = 3;

/** Reads an optional env variable through an option parser, so a bad value is a usage error that names the variable. */
function envValue<T>(name: string, parse: (value: string) => T): T | undefined {
  const value = process.env[name];
  if (!value) return undefined;
  try {
    return parse(value);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new InvalidArgumentError(`${name}=${value}: ${error.message}`);
    throw error;
  }
}

const program = new Command('npm start')
  .description('Run payrelay locally: DynamoDB/SQS emulators, a local Secrets Manager stand-in, the provider simulator, the HTTP gateway, the SQS pollers, the reconciler schedule and the callback applier\'s sweep.')
  .option('--port <port>', 'gateway port (env PAYRELAY_PORT; default 3000)', portArg)
  .option('--simulator-port <port>', 'simulator port (env PAYRELAY_SIMULATOR_PORT; default 4010)', portArg)
  .option('--provider-url <url>', 'use this payout service instead of the simulator (env PAYRELAY_PROVIDER_URL)', providerBaseUrl)
  .option('--kyc-url <url>', 'use this KYC service instead of the simulator (env PAYRELAY_KYC_URL)', providerBaseUrl)
  .option('--reconcile-every <seconds>', `reconciler interval (default: ${DEFAULT_RECONCILE_EVERY_MINUTES * 60}, the deployed schedule; e.g. 5 for a quicker demo)`, secondsArg)
  .option('--config <file>', 'local config file', LOCAL_CONFIG_PATH)
  .option('--quiet', 'do not print the gateway access log and poller lines')
  // Throw instead of exiting with commander's 1, so main() exits 2 for a usage error, as the CLI does.
  .exitOverride()
  // Usage errors start `payrelay:` like every other line this command prints.
  .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'payrelay: ')) })
  .addHelpText('after', '\nExample:\n  npm start -- --port 3100 --reconcile-every 5\n  npx payrelay demo   # in another terminal');

function printSummary(stack: LocalStack, reconcileSeconds: number): void {
  const table = new Table({ head: ['what', 'where'], wordWrap: true, style: tableStyle() });
  table.push(
    ['gateway (HTTP API)', stack.urls.gateway],
    ['KYC callback URL (dev token)', `POST ${stack.urls.kycCallback}`],
    ['payout notification URL', `POST ${stack.urls.payoutNotification}`],
    ['payout service', `${stack.urls.payoutApi}${stack.simulator ? ' (simulator)' : ''}`],
    ['KYC service', `${stack.urls.kycApi}${stack.simulator ? ' (simulator)' : ''}`],
    // The queue URLs are the queues' names as fauxqs gives them (their host does not resolve): a
    // producer of its own sends to the SQS endpoint below with one of them as QueueUrl.
    ['SQS endpoint', `${stack.env.AWS_ENDPOINT_URL_SQS ?? '?'}  (send here; each queue URL below names a queue)`],
    ['DynamoDB endpoint', stack.env.AWS_ENDPOINT_URL_DYNAMODB ?? '?'],
    ['payouts queue', stack.queueUrls.payouts],
    ['dead-letter queue', stack.queueUrls.deadLetter],
    ['checks queue', stack.queueUrls.checks],
    // One name a line: the table stays about 125 columns wide, not 160.
    ['tables', [stack.names.payoutsTable, stack.names.eventsTable, stack.names.kycTable, stack.names.quarantineTable, stack.names.collectionsTable].join('\n')],
    [
      'secrets (local stand-in)',
      `${stack.names.providerSecret}${stack.providerSecret ? '' : ' (EMPTY: run payrelay secrets put provider)'}\n${stack.names.kycSecret}${stack.kycSecret ? '' : ' (EMPTY: run payrelay secrets put kyc)'}`,
    ],
    ['SQS poller -> payout-worker', 'batch 10, long poll, partial batch failures'],
    ['SQS poller -> payout-checker', 'delayed checks: 10, 20, 40 ... s after each payout intent'],
    ['schedule -> reconciler', `every ${reconcileSeconds} s`],
    [
      'gateway -> callback-applier',
      `after each stored callback, plus a sweep every ${LOCAL_APPLY_EVERY_MS} ms to ${LOCAL_APPLY_IDLE_MAX_MS / 1000} s when idle (in AWS the events stream does)`,
    ],
    ['state file (for the CLI)', LOCAL_STATE_PATH],
    [
      'merchant (platform_merchant_id)',
      stack.providerSecret ? `${stack.providerSecret.platform_merchant_id}  (the merchant every payout row must name)` : 'unknown until payrelay secrets put provider',
    ],
  );
  console.log(table.toString());
  console.log(
    [
      'Try next, in another terminal:',
      '  npx payrelay demo                         # KYC journey, a paid collection + 50 payouts, then a summary',
      '  npx payrelay payouts enqueue --file docs/examples/payouts.csv   # 5 payouts: 3 paid, a name mismatch, a FAILED one',
      '  npx payrelay payouts enqueue --file <f>   # your own payouts (CSV or JSONL, docs/cli.md)',
      '  npx payrelay payouts list --state SUCCEEDED',
      '  npx payrelay collections create --amount 40 --currency GHS   # money coming in (docs/collections.md)',
      '  npx payrelay --help',
      'Ctrl-C stops everything.',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  // Lambda runs Node 24; the locked SDK supports the local Node 20, so its notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Every handler runs in this one process: keep each invocation's log context its own.
  isolateConcurrentInvocations();
  program.parse();
  const opts = program.opts<{
    port?: number;
    simulatorPort?: number;
    providerUrl?: string;
    kycUrl?: string;
    reconcileEvery?: number;
    config: string;
    quiet?: boolean;
  }>();
  const config = loadLocalConfig(opts.config);
  const reconcileSeconds = opts.reconcileEvery ?? reconcileEverySeconds(config);
  const log = opts.quiet ? undefined : (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  const providerUrl = opts.providerUrl ?? envValue('PAYRELAY_PROVIDER_URL', providerBaseUrl);
  const kycUrl = opts.kycUrl ?? envValue('PAYRELAY_KYC_URL', providerBaseUrl);
  const gatewayPort = opts.port ?? envValue('PAYRELAY_PORT', portArg) ?? config.gatewayPort;
  const simulatorPort = opts.simulatorPort ?? envValue('PAYRELAY_SIMULATOR_PORT', portArg) ?? config.simulatorPort;

  console.log('payrelay: starting the local stack (DEV-ONLY keys from local/config.json)...');
  const stack = await startLocalStack({
    config,
    gatewayPort,
    simulatorPort,
    ...(providerUrl ? { providerUrl } : {}),
    ...(kycUrl ? { kycUrl } : {}),
    reconcileEveryMs: reconcileSeconds * 1000,
    writeStateFile: true,
    ...(log ? { log } : {}),
  });
  printSummary(stack, reconcileSeconds);

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`\npayrelay: ${signal}, stopping...`);
    stack.stop().then(
      () => {
        console.log('payrelay: stopped.');
        process.exit(0);
      },
      (error: unknown) => {
        console.error(`payrelay: stop failed: ${(error as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  // A bad env value (envValue): commander has not seen it, so print it here.
  if (error instanceof InvalidArgumentError) {
    console.error(`payrelay: ${error.message}`);
    process.exit(EXIT_INVALID_INPUT);
  }
  // Commander has already printed its `payrelay:` line (or the help, which exits 0).
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : error.code === 'commander.invalidArgument' ? EXIT_INVALID_INPUT : EXIT_USAGE);
  console.error(`payrelay: ${(error as Error).message}`);
  process.exit(1);
});
