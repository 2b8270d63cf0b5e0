import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help, type Option } from 'commander';
import { registerCollectionsCommands } from './commands/collections';
import { registerConsoleCommand } from './commands/console';
import { registerDemoCommand } from './commands/demo';
import { registerDlqCommands } from './commands/dlq';
import { registerEventsCommands } from './commands/events';
import { registerKycCommands } from './commands/kyc';
import { registerPartnerCommands } from './commands/partner';
import { registerPayoutsCommands } from './commands/payouts';
import { registerSchemaCommands } from './commands/schema';
import { registerSecretsCommands } from './commands/secrets';
import { registerSignatureCommands } from './commands/signature';
import { providerBaseUrl } from '@local/option-args';
import { registerSimulatorCommand } from '@simulator/command';
import { callsNoAws, refuseIgnoredAwsOptions } from './aws-options';
import { awsRegion, nonEmptyText } from './context';
import { describeError, exitCodeOf, EXIT, printErrorLine } from './output';

/** The version of this checkout (package.json), for `--version` and bug reports. */
export const PAYRELAY_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * An option's line in `--help`: commander's own, plus `required` for a mandatory option (commander
 * marks none), first in the parenthesis commander adds (`(required, choices: "succeeded", "failed")`).
 * Every command inherits it from the program, so every option made with `requiredOption` or
 * `makeOptionMandatory` says so, and no other does.
 */
export function optionHelp(help: Help, option: Option): string {
  const text = Help.prototype.optionDescription.call(help, option);
  if (!option.mandatory) return text;
  const extra = text.slice(option.description.length).trim();
  return extra.startsWith('(') ? `${option.description} (required, ${extra.slice(1)}` : `${option.description} (required)`;
}

/**
 * The `payrelay` operator CLI. Commands target the local stack started by `npm start` (found through
 * .payrelay-local/state.json) or, with --stack, a deployed stack (its CloudFormation outputs).
 */
export function buildProgram(): Command {
  const program = new Command('payrelay')
    .description('Operate payrelay: partners and keys, KYC, bulk payouts, status, collection orders, DLQ redrive, event replay, signatures.')
    .version(PAYRELAY_VERSION, '-V, --version', 'print the payrelay version')
    .option('--json', 'print JSON instead of tables (for scripts)')
    .option('--stack <name>', 'target a deployed stack by CloudFormation stack name (default: the local stack from `npm start`)', nonEmptyText)
    .option('--profile <aws-profile>', 'AWS profile for --stack (a signing profile is --signing-profile)', nonEmptyText)
    .option('--region <region>', 'AWS region for --stack, e.g. eu-west-1', awsRegion)
    .option('--provider-url <url>', 'payout service base URL, http(s) (overrides the target)', providerBaseUrl)
    .option('--kyc-url <url>', 'KYC service base URL, http(s) (overrides the target)', providerBaseUrl)
    .exitOverride()
    // Usage errors start `payrelay:` like every other failure line, not commander's `error:`.
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'payrelay: ')) })
    .showHelpAfterError('(run with --help for usage)')
    // Wrap descriptions beside long option names too (commander leaves them unwrapped under 40 columns);
    // mark the required options.
    .configureHelp({
      minWidthToWrap: 24,
      optionDescription(option) {
        return optionHelp(this as Help, option);
      },
    })
    .hook('preAction', (_program, action) => refuseIgnoredAwsOptions(action))
    .addHelpText(
      'after',
      '\nExamples:\n  $ npm start                      # in one terminal\n  $ payrelay demo                  # in another\n  $ payrelay payouts status WD-1 --stack payrelay-prod --profile ops\n',
    );
  registerPartnerCommands(program);
  registerSecretsCommands(program);
  registerKycCommands(program);
  registerPayoutsCommands(program);
  registerCollectionsCommands(program);
  registerDlqCommands(program);
  registerEventsCommands(program);
  registerSignatureCommands(program);
  registerSchemaCommands(program);
  callsNoAws(registerSimulatorCommand(program));
  registerDemoCommand(program);
  registerConsoleCommand(program);
  return program;
}

/** Runs the CLI; every failure ends as one line on stderr and a non-zero exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version exit 0; usage errors were already printed by commander. Help shown as an
      // error (a command group without its command, `help` of an unknown one) gets its line too.
      if (error.code === 'commander.help' && error.exitCode !== 0) {
        // Option values (`--stack prod help bogus`) are not commands: any `help` word means help was asked for.
        const unknownHelp = argv.slice(2).includes('help');
        printErrorLine(`payrelay: ${unknownHelp ? 'no such command' : 'a command is needed here'}: choose one of those listed above`);
      }
      if (error.exitCode === 0) return EXIT.ok;
      // A value an option's own check refused (`--limit 0`, `--day 2026-13-45`, a choice not offered) is
      // invalid input, as a value any later check refuses (`--amount -5`, an empty --evidence, a row of a
      // file): the same mistake gets the same code wherever it is caught (docs/cli.md, "Exit codes").
      // Usage (2) is the command line itself: an unknown command or option, a missing one or a missing value.
      return error.code === 'commander.invalidArgument' ? EXIT.invalidInput : EXIT.usage;
    }
    printErrorLine(`payrelay: ${describeError(error)}`);
    const code = exitCodeOf(error);
    // As commander ends its own usage errors (showHelpAfterError above).
    if (code === EXIT.usage) printErrorLine('(run with --help for usage)');
    return code;
  }
}
