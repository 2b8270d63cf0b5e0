import { InvalidArgumentError, Option, type Command } from 'commander';
import { resolveSigningProfile, SigningProfileError } from '@shared/signing';
import { FAULT_OPERATIONS, FaultConfigError, validateFaults, type FaultOperation, type OperationFaults } from './faults';
import { startSimulator, type SimulatorOptions } from './index';
import type { LogLevel } from './logger';

const intArg =
  (name: string, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `${name} must be an integer >= ${min}` : `${name} must be an integer from ${min} to ${max}`);
    }
    return n;
  };

const rateArg = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('must be a number between 0 and 1');
  return n;
};

const listArg = (value: string): string[] =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

const profileArg = (value: string): string => {
  try {
    resolveSigningProfile(value);
    return value;
  } catch (error) {
    if (error instanceof SigningProfileError) throw new InvalidArgumentError(error.message);
    throw error;
  }
};

const faultsArg = (value: string): Partial<Record<FaultOperation, OperationFaults>> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('must be JSON, e.g. \'{"payout":{"timeoutRate":0.1}}\'');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidArgumentError('must be a JSON object keyed by operation');
  }
  try {
    return Object.fromEntries(Object.entries(parsed).map(([op, f]) => [op, validateFaults(op, f)]));
  } catch (error) {
    if (error instanceof FaultConfigError) throw new InvalidArgumentError(error.message);
    throw error;
  }
};

interface PartnerSeed {
  partner_code: string;
  email: string;
}

const partnerArg = (value: string, previous: PartnerSeed[] = []): PartnerSeed[] => {
  const [partner_code, email] = value.split(':');
  if (!partner_code || !email) throw new InvalidArgumentError('must be <partner_code>:<email>');
  return [...previous, { partner_code, email }];
};

/** The parsed command-line options. */
export interface SimulatorCommandOptions {
  port: number;
  host: string;
  seed: number;
  signingProfile?: string;
  duplicateRule: 'refuse' | 'return-existing';
  settleAfterMs: number;
  settleAfterChecks: number;
  failAccounts?: string[];
  failAmounts?: string[];
  failProbability?: number;
  statusSuccess: 'COMPLETED' | 'SUCCESSFUL';
  statusPending: 'PENDING' | 'INITIATED';
  kycMode: 'auto' | 'manual';
  kycStepDelay: number;
  kycDecision: 'approved' | 'rejected';
  bearerOptional?: boolean;
  collectionOrderPath: string;
  notificationUrl?: string;
  faults?: Partial<Record<FaultOperation, OperationFaults>>;
  partner?: PartnerSeed[];
  log: LogLevel;
}

/** Maps parsed command-line options to `startSimulator` options. */
export function toSimulatorOptions(o: SimulatorCommandOptions): SimulatorOptions {
  return {
    port: o.port,
    host: o.host,
    seed: o.seed,
    signingProfile: o.signingProfile ? resolveSigningProfile(o.signingProfile) : undefined,
    duplicateRule: o.duplicateRule,
    progression: {
      settleAfterMs: o.settleAfterMs,
      settleAfterChecks: o.settleAfterChecks,
      outcome: { failAccountNumbers: o.failAccounts, failAmounts: o.failAmounts, failProbability: o.failProbability },
    },
    statusWords: { success: o.statusSuccess, pending: o.statusPending },
    kyc: { mode: o.kycMode, stepDelayMs: o.kycStepDelay, decision: o.kycDecision },
    bearerPrefixRequired: !o.bearerOptional,
    collectionOrderPath: o.collectionOrderPath,
    notificationUrl: o.notificationUrl,
    faults: o.faults,
    log: o.log,
  };
}

/**
 * Adds the simulator's options and action to `command`; simulator/main.ts and `payrelay simulator`
 * share it, so both have the same flags and --help.
 */
export function configureSimulatorCommand(command: Command): Command {
  return command
    .description(
      'run the local simulator of the payout service and the KYC service on 127.0.0.1 (one port; KYC under /kyc), with fault injection and a payout ledger',
    )
    .option('-p, --port <port>', 'port to listen on (0 picks a free one)', intArg('port', 0, 65535), 4010)
    .option('--host <address>', 'bind address', '127.0.0.1')
    .option('--seed <n>', 'seed of the PRNG behind every random choice (reproducible chaos)', intArg('seed'), 1)
    .option('--signing-profile <name|json>', 'signing profile to verify and sign with (same syntax as SIGNING_PROFILE)', profileArg)
    .addOption(
      new Option('--duplicate-rule <rule>', 'answer to an already executed withdrawal_reference')
        .choices(['refuse', 'return-existing'])
        .default('refuse'),
    )
    .option('--settle-after-ms <ms>', 'age before a payout leaves PENDING', intArg('settle-after-ms'), 0)
    .option('--settle-after-checks <n>', 'GetPayout checks before a payout leaves PENDING', intArg('settle-after-checks'), 0)
    .option('--fail-accounts <numbers>', 'comma-separated account numbers whose payouts settle FAILED', listArg)
    .option('--fail-amounts <amounts>', 'comma-separated canonical amounts (e.g. 13.13) whose payouts settle FAILED', listArg)
    .option('--fail-probability <p>', 'probability (0..1) that a payout settles FAILED', rateArg)
    .addOption(
      new Option('--status-success <word>', 'GetPayout word for a delivered payout').choices(['COMPLETED', 'SUCCESSFUL']).default('COMPLETED'),
    )
    .addOption(
      new Option('--status-pending <word>', 'GetPayout word while in progress').choices(['PENDING', 'INITIATED']).default('PENDING'),
    )
    .addOption(
      new Option('--kyc-mode <mode>', 'play KYC journeys by themselves, or step by step via POST /__admin/kyc/advance')
        .choices(['auto', 'manual'])
        .default('manual'),
    )
    .option('--kyc-step-delay <ms>', 'delay before each KYC callback in auto mode', intArg('kyc-step-delay'), 1000)
    .addOption(
      new Option('--kyc-decision <decision>', 'decision of auto-played journeys').choices(['approved', 'rejected']).default('approved'),
    )
    .option('--bearer-optional', 'also accept the bare public key (default: "Bearer <key>" is required)')
    .option('--collection-order-path <path>', 'path of the collection-order endpoint', '/api/v1/no-auth/PartnerP2P/CollectionOrder')
    .option('--notification-url <url>', 'default URL for signed order notifications')
    .option('--faults <json>', `faults per operation; operations: ${FAULT_OPERATIONS.join(', ')}`, faultsArg)
    .option('--partner <code:email>', 'create a partner at start and print its credentials (repeatable)', partnerArg)
    .addOption(new Option('--log <level>', 'log level').choices(['silent', 'info', 'debug']).default('info'))
    .addHelpText(
      'after',
      `
Example:
  $ npm run simulator -- --port 4011 --partner acme:ops@acme.test --settle-after-checks 2 \\
      --faults '{"payout":{"timeoutRate":0.1,"times":3},"getPayout":{"alternativeWordsRate":0.5}}'
  (port 4011: npm start already runs a simulator on 4010)

Admin API (loopback only): GET /__admin/ledger, /__admin/outbox, /__admin/faults; PUT /__admin/faults/<operation>;
POST /__admin/kyc/advance, /__admin/partners, /__admin/reset. Details: docs/simulator.md.`,
    )
    .action(async (raw: SimulatorCommandOptions) => {
      const sim = await startSimulator(toSimulatorOptions(raw)).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        // Say which port and what to do, not a bare EADDRINUSE.
        throw new Error(`port ${raw.port} on ${raw.host} is in use (npm start runs a simulator on 4010): pick another with --port, or 0 for a free one`);
      });
      console.log(`payout service: ${sim.payoutBaseUrl}`);
      console.log(`KYC service:    ${sim.kycBaseUrl}`);
      console.log(`admin API:      ${sim.url}/__admin`);
      for (const partner of raw.partner ?? []) {
        console.log(`partner ${partner.partner_code}: ${JSON.stringify(sim.admin.createPartner(partner))}`);
      }
      console.log('Ctrl-C stops it.');
      // Ctrl-C reaches every process of the group (npx, tsx, this one), so a second copy of the
      // signal may arrive while stopping: the handler stays installed until the stop is done.
      let stopping = false;
      const signal = await new Promise<NodeJS.Signals>((resolve) => {
        const onSignal = (received: NodeJS.Signals): void => {
          if (!stopping) resolve(received);
          stopping = true;
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      });
      console.log(`${signal} received, stopping`);
      await sim.stop();
      process.removeAllListeners('SIGINT');
      process.removeAllListeners('SIGTERM');
      console.log('simulator stopped');
    });
}

/** Adds `payrelay simulator` to the operator CLI. */
export function registerSimulatorCommand(program: Command): Command {
  return configureSimulatorCommand(program.command('simulator'));
}
