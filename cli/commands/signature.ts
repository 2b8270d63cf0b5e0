import type { Command} from 'commander';
import { Option } from 'commander';
import {
  calibrate,
  DEFAULT_SIGNING_PROFILE,
  SigningProfileError,
  inferSigningOperation,
  resolveSigningProfile,
  signPayload,
  verifyPayload,
  type SigningOperation,
  type SigningProfile,
  type SigningSecrets,
} from '@shared/signing';
import { contextOf, nonEmptyText, parseSince, positiveInt, timeArg, withExample, type CommandContext } from '../context';
import { readJsonObject } from '../io';
import { targetSigningSecrets } from '../operator';
import { cliSigningProfile } from '../settings';
import { CliError, EXIT, printTable, jsonText, printLine } from '../output';
import { requireEnv } from '../target';

const OPERATIONS: SigningOperation[] = ['accountVerification', 'payout', 'orderNotification', 'collectionOrder'];

interface SigningOptions {
  operation?: SigningOperation;
  signingProfile?: string;
  secretsFile?: string;
}

/**
 * The signing secrets: from --secrets-file (a JSON with partner_secret_key and merchant_secret_key,
 * like the provider secret) or from the target's provider secret. Never from a flag, so secrets
 * stay out of shell history.
 */
async function signingSecrets(ctx: CommandContext, secretsFile?: string): Promise<SigningSecrets> {
  if (!secretsFile) return targetSigningSecrets(await ctx.target());
  const source = readJsonObject(secretsFile);
  const partnerSecret = source.partner_secret_key;
  const merchantSecret = source.merchant_secret_key ?? '';
  if (typeof partnerSecret !== 'string' || partnerSecret === '' || typeof merchantSecret !== 'string') {
    throw new CliError('the secrets need partner_secret_key (and merchant_secret_key for payout and notifications)', EXIT.invalidInput);
  }
  return { partnerSecret, merchantSecret };
}

/**
 * The profile of --signing-profile, else SIGNING_PROFILE (read as the functions read it), else the
 * default; a wrong one says which it was and what a name looks like.
 */
function profileOf(value?: string): SigningProfile {
  if (value === undefined) return cliSigningProfile();
  try {
    if (value.trim() === '') throw new SigningProfileError('is empty: leave it out to use SIGNING_PROFILE or the default profile');
    return resolveSigningProfile(value);
  } catch (error) {
    if (!(error instanceof SigningProfileError)) throw error;
    throw new CliError(`--signing-profile: ${error.message} (a profile name is <algorithm>/<serialization>/<encoding>, e.g. ${DEFAULT_SIGNING_PROFILE.name}; docs/signing.md)`, EXIT.invalidInput);
  }
}

function operationOf(body: object, given?: SigningOperation): SigningOperation {
  const operation = given ?? inferSigningOperation(body);
  if (!operation) throw new CliError('cannot tell the operation from the body: pass --operation', EXIT.invalidInput);
  return operation;
}

const operationOption = (): Option =>
  new Option('--operation <operation>', 'signing operation (inferred from the body when left out)').choices(OPERATIONS);
const commonOptions = (cmd: Command): Command =>
  cmd
    .addOption(operationOption())
    .option('--signing-profile <profile>', 'signing profile name or JSON (default: SIGNING_PROFILE or the default profile)')
    .option('--secrets-file <file>', 'JSON with partner_secret_key and merchant_secret_key (default: the target provider secret)', nonEmptyText);

/** `payrelay signature sign|verify|calibrate`. */
export function registerSignatureCommands(program: Command): void {
  const signature = withExample(
    program.command('signature').description('sign, verify and calibrate provider signatures (docs/signing.md)'),
    'payrelay signature verify notification.json --secrets-file keys.json',
  );

  withExample(
    commonOptions(signature.command('sign').argument('<body-file>', 'JSON body (or - for stdin); its signature field is ignored')),
    'payrelay signature sign payout.json --operation payout --secrets-file keys.json',
  )
    .description('print the signature of a body and the body with it')
    .action(async (file: string, opts: SigningOptions, cmd: Command) => {
      const ctx = contextOf(cmd);
      const body = readJsonObject(file);
      const operation = operationOf(body, opts.operation);
      const profile = profileOf(opts.signingProfile);
      const sig = signPayload(body, operation, await signingSecrets(ctx, opts.secretsFile), profile);
      const { signature: _ignored, ...rest } = body;
      const signed = { ...rest, signature: sig };
      ctx.out.result({ operation, profile: profile.name, signature: sig, body: signed }, () => {
        printTable(['operation', 'profile', 'signature'], [[operation, profile.name, sig]]);
        printLine(jsonText(signed));
      });
    });

  withExample(
    commonOptions(signature.command('verify').argument('<body-file>', 'JSON body with its signature field (or - for stdin)')),
    'payrelay signature verify notification.json --operation orderNotification',
  )
    .description('check the signature field of a body; exits 7 when it does not match')
    .action(async (file: string, opts: SigningOptions, cmd: Command) => {
      const ctx = contextOf(cmd);
      const body = readJsonObject(file);
      if (typeof body.signature !== 'string' || body.signature === '') {
        throw new CliError('the body has no signature field to check (payrelay signature sign prints a body with one)', EXIT.invalidInput);
      }
      const operation = operationOf(body, opts.operation);
      const profile = profileOf(opts.signingProfile);
      const valid = verifyPayload(body, operation, await signingSecrets(ctx, opts.secretsFile), profile);
      ctx.out.result({ operation, profile: profile.name, valid }, () => {
        printTable(['operation', 'profile', 'valid'], [[operation, profile.name, valid ? 'yes' : 'NO']]);
      });
      if (!valid) throw new CliError('signature does not match', EXIT.signatureMismatch);
    });

  withExample(
    signature
      .command('calibrate')
      .argument('[body-file]', 'a known-good body (or - for stdin), e.g. from the provider signing endpoint')
      .option('--signature <signature>', 'the known-good signature (default: the body signature field)')
      .option('--from-quarantine', 'use the quarantined order notifications (payrelay events quarantine list) instead of a body file')
      .option('--since <time>', 'with --from-quarantine: oldest notification, ISO 8601 or a duration back from now', timeArg, '7d')
      .option('--limit <n>', 'with --from-quarantine: notifications to try at most', positiveInt, 50)
      .addOption(operationOption())
      .option('--secrets-file <file>', 'JSON with partner_secret_key and merchant_secret_key (default: the target provider secret)', nonEmptyText),
    'payrelay signature calibrate sample.json --secrets-file keys.json',
    'payrelay signature calibrate --from-quarantine --since 2d',
  )
    .description(
      'list every signing profile that reproduces a known-good signature, or the signatures of the quarantined order notifications (put one in SIGNING_PROFILE)',
    )
    .action(
      async (
        file: string | undefined,
        opts: { signature?: string; fromQuarantine?: boolean; since: string; limit: number; operation?: SigningOperation; secretsFile?: string },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd);
        if (opts.fromQuarantine) {
          if (file !== undefined) throw new CliError('give either a body file or --from-quarantine, not both', EXIT.usage);
          await calibrateQuarantine(ctx, opts);
          return;
        }
        if (file === undefined) throw new CliError('give a body file (or - for stdin), or --from-quarantine', EXIT.usage);
        const body = readJsonObject(file);
        const known = opts.signature ?? (typeof body.signature === 'string' ? body.signature : undefined);
        if (!known) throw new CliError('no signature: pass --signature or give a body with a signature field', EXIT.invalidInput);
        const profiles = calibrate(body, known, await signingSecrets(ctx, opts.secretsFile), opts.operation ?? inferSigningOperation(body));
        ctx.out.result(profiles, () => {
          if (profiles.length === 0) printLine('No supported signing scheme reproduces this signature.');
          else printTable(['SIGNING_PROFILE value'], profiles.map((p) => [p.name]));
        });
        if (profiles.length === 0) throw new CliError('no supported signing profile reproduces the signature', EXIT.signatureMismatch);
      },
    );
}

/**
 * `signature calibrate --from-quarantine`: every profile and key recipe against the quarantined
 * notifications of the period; the profile reproducing all of them is the provider's scheme.
 */
async function calibrateQuarantine(ctx: CommandContext, opts: { since: string; limit: number; secretsFile?: string }): Promise<void> {
  const now = new Date();
  const since = parseSince(opts.since, now);
  const limit = opts.limit;
  const secrets = await signingSecrets(ctx, opts.secretsFile);
  const target = await ctx.target();
  const { createQuarantineStore } = await import('@shared/adapters/quarantine-store');
  const { calibrateFromQuarantine } = await import('@shared/app/quarantine');
  const quarantine = createQuarantineStore({ tableName: requireEnv(target, 'QUARANTINE_TABLE_NAME') });
  const result = await calibrateFromQuarantine(quarantine, secrets, { since, until: now, limit });
  const profiles = result.profiles.map((p) => ({ profile: p.profile.name, reproduced: p.reproduced, of: result.tried, ids: p.ids }));
  ctx.out.result({ tried: result.tried, profiles }, () => {
    if (result.tried === 0) printLine(`No quarantined notification since ${since.toISOString()}.`);
    else if (profiles.length === 0) printLine(`No supported signing scheme reproduces any of the ${result.tried} quarantined notification(s).`);
    else {
      printTable(['SIGNING_PROFILE value', 'reproduces'], profiles.map((p) => [p.profile, `${p.reproduced} of ${p.of}`]));
      const best = profiles[0];
      if (best && best.reproduced === result.tried) printLine(`Set SIGNING_PROFILE=${best.profile} (it reproduces every quarantined notification).`);
    }
  });
  if (result.tried === 0) throw new CliError('nothing in the quarantine for this period; widen --since', EXIT.notFound);
  if (profiles.length === 0) throw new CliError('no supported signing profile reproduces the quarantined notifications', EXIT.signatureMismatch);
}
