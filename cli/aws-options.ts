import type { Command } from 'commander';
import { CliError, EXIT } from './output';
import type { GlobalOptions } from './target';

/** Commands that never call an AWS API, whatever the target (`callsNoAws`). */
const CALLS_NO_AWS = new WeakSet<Command>();

/** Marks a command that never calls an AWS API: `--stack`, `--profile` and `--region` are refused on it. */
export function callsNoAws(command: Command): Command {
  CALLS_NO_AWS.add(command);
  return command;
}

/** The command as typed after `payrelay` (`signature verify`). */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Whether an AWS profile name is written like a signing profile (`hmac-sha512/compact-insertion/hex`, or JSON). */
const looksLikeSigningProfile = (value: string): boolean => value.includes('/') || value.trim().startsWith('{');

/**
 * Refuses the global AWS options where the command would ignore them. They choose the credentials
 * and region of `--stack`; anywhere else they used to be dropped without a word, and on the commands
 * that take `--signing-profile` that hid a real mistake: `payrelay signature verify --profile
 * hmac-sha512/...` verified with another signing profile than the one typed.
 * @throws CliError (usage) naming the option, why it is not used, and `--signing-profile` where it applies
 */
export function refuseIgnoredAwsOptions(action: Command): void {
  const options = action.optsWithGlobals<GlobalOptions & { secretsFile?: string; fromQuarantine?: boolean }>();
  const noAws = CALLS_NO_AWS.has(action);
  const given = [
    noAws && options.stack !== undefined ? '--stack' : undefined,
    options.profile !== undefined ? '--profile' : undefined,
    options.region !== undefined ? '--region' : undefined,
  ].filter((name) => name !== undefined);
  if (given.length === 0) return;
  const signs = action.options.some((option) => option.long === '--signing-profile');
  const profile = options.profile;
  const hint = signs && profile !== undefined ? '; to choose the signing profile, use --signing-profile <profile>' : '';
  let why: string | undefined;
  if (noAws) why = `not used by \`payrelay ${commandPath(action)}\`, which calls no AWS API`;
  else if (options.stack === undefined) why = 'for a deployed stack only (--stack <name>); without --stack this command targets the local stack';
  // The signature commands read the keys from --secrets-file instead of the stack; only calibrate --from-quarantine reads the stack's quarantine then.
  else if (options.secretsFile !== undefined && options.fromQuarantine !== true) why = 'not used with --secrets-file: this command then calls no AWS API';
  else if (signs && profile !== undefined && looksLikeSigningProfile(profile)) {
    throw new CliError(`--profile "${profile}" is written like a signing profile, but --profile is the AWS profile of --stack${hint}`, EXIT.usage);
  }
  if (why === undefined) return;
  throw new CliError(`${given.join(', ')} ${given.length > 1 ? 'are' : 'is'} ${why}${hint}`, EXIT.usage);
}
