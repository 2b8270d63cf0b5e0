import { hostname, userInfo } from 'node:os';
import type { OperatorDeps } from '@shared/app/resolve-payout';
import { ACCOUNT_KEY_SECRET } from '@shared/config/resources';
import type { PayoutIdentity } from '@shared/domain/identity';
import type { Payout, PayoutHistoryEntry } from '@shared/domain/payout';
import type { AccountFingerprints } from '@shared/ports/payouts';
import type { Log } from '@shared/ports/runtime';
import type { SigningSecrets } from '@shared/signing';
import type { CommandContext } from './context';
import { noTelemetry, quietLog } from './log';
import { CliError, EXIT } from './output';
import { requireEnv, type Target } from './target';

/** The identity options `payouts status`, `resolve` and `retry` share. */
export interface IdentityOptions {
  readonly currency?: string;
  readonly merchant?: string;
}

/**
 * The payouts of a reference the identity options leave; none is exit 4, saying which option left
 * none when the reference has payouts under other merchants or currencies.
 */
export function matchingAll(reference: string, found: readonly Payout[], opts: IdentityOptions): Payout[] {
  const matching = found.filter(
    (p) => (!opts.currency || p.record.identity.currency === opts.currency) && (!opts.merchant || p.record.identity.platform_merchant_id === opts.merchant),
  );
  if (matching.length === 0) {
    const filters = [opts.merchant && `merchant ${opts.merchant}`, opts.currency && `currency ${opts.currency}`].filter(Boolean).join(' and ');
    const others = found.length > 0 ? ` (${found.length} with other ${opts.merchant && opts.currency ? 'merchants or currencies' : opts.merchant ? 'merchants' : 'currencies'})` : '';
    throw new CliError(`no payout with withdrawal_reference ${reference}${filters ? ` for ${filters}${others}` : ''}`, EXIT.notFound);
  }
  return matching;
}

/**
 * The one payout a reference and the identity options name. Several payouts may share a
 * withdrawal_reference (one per merchant and currency): then the options must pick one.
 */
export function pickOne(reference: string, found: readonly Payout[], opts: IdentityOptions): Payout {
  const matching = matchingAll(reference, found, opts);
  if (matching.length > 1) {
    const which = matching.map((p) => `${p.record.identity.platform_merchant_id}/${p.record.identity.currency}`).join(', ');
    throw new CliError(`${matching.length} payouts have withdrawal_reference ${reference} (${which}): pick one with --merchant and --currency`, EXIT.invalidInput);
  }
  return matching[0] as Payout;
}

/** The identity of this process on the machine it runs on: `<os user>@<hostname>`. */
function localActor(): string {
  return `${userInfo().username}@${hostname()}`;
}

/** The identity each target's actions run as, resolved once per process (per AWS profile for a deployed stack). */
const actors = new Map<string, Promise<string>>();

/**
 * The identity that runs this process's operator actions, recorded beside the name the operator
 * states: the AWS caller identity's ARN (STS GetCallerIdentity, with --profile) for a deployed stack,
 * else `<os user>@<hostname>` (also when STS cannot be asked). Resolved once per process and cached:
 * the CLI commands and the console's services both take it from here.
 */
export function operatorActor(target: Target): Promise<string> {
  const key = target.kind === 'deployed' ? `deployed:${target.env.AWS_PROFILE ?? ''}` : 'local';
  let actor = actors.get(key);
  if (actor === undefined) {
    actor = target.kind === 'deployed' ? callerArn() : Promise.resolve(localActor());
    actors.set(key, actor);
  }
  return actor;
}

async function callerArn(): Promise<string> {
  const { STSClient, GetCallerIdentityCommand } = await import('@aws-sdk/client-sts');
  const sts = new STSClient({});
  try {
    const out = await sts.send(new GetCallerIdentityCommand({}));
    if (out.Arn) return out.Arn;
  } catch {
    // Fall back to <os user>@<hostname>: the action still records who ran it on this machine.
  } finally {
    sts.destroy();
  }
  return localActor();
}

/**
 * Who acts, for the audit trail: --by, else the identity that runs the process (operatorActor), which
 * is then not recorded a second time as the actor.
 */
export async function operatorName(target: Target, by: string | undefined): Promise<string> {
  if (by !== undefined && by.trim() !== '') return by.trim();
  return operatorActor(target);
}

/**
 * The stated name and the identity that ran an operator's action, as the CLI and the console show
 * them: "alice (as arn:aws:sts::123456789012:assumed-role/ops/ama)", or "alice" without an actor.
 */
export function whoText(by: string, actor: string | undefined): string {
  return actor === undefined ? by : `${by} (as ${actor})`;
}

/**
 * A history entry's reason with the identity that ran it beside the name the reason quotes
 * ("resolved as FAILED by alice (as arn:...): ticket 4711"); appended when the reason does not quote
 * the name. Unchanged for an entry without an actor.
 */
export function reasonWithActor(entry: PayoutHistoryEntry): string {
  const { reason, by, actor } = entry;
  if (actor === undefined) return reason;
  if (by === undefined) return `${reason} (as ${actor})`;
  const named = `by ${by}`;
  const at = reason.indexOf(named);
  if (at < 0) return `${reason}, by ${whoText(by, actor)}`;
  const end = at + named.length;
  return `${reason.slice(0, end)} (as ${actor})${reason.slice(end)}`;
}

/**
 * The dependencies of the operator use cases for the target: its payouts table, provider secret and
 * payout service (signing profile, Bearer prefix and status map from SIGNING_PROFILE, BEARER_PREFIX and
 * PROVIDER_STATUS_MAP in the environment, as the deployed functions have them).
 */
export async function operatorDeps(ctx: CommandContext): Promise<{ target: Target; deps: OperatorDeps; close(): void }> {
  const target = await ctx.target();
  // The CLI prints the outcome itself; the use cases' log lines are for the deployed functions.
  return { target, ...(await operatorDepsFor(target, quietLog)) };
}

/**
 * The payout service client of the target and its cached provider credentials, with the settings
 * the deployed functions read from the environment, read here from the shell's with the same rules:
 * SIGNING_PROFILE, BEARER_PREFIX, PROVIDER_STATUS_MAP, and COLLECTION_ORDER_PATH /
 * COLLECTION_ORDER_BODY for collection orders. A setting that cannot be used fails with a ConfigError
 * naming it.
 */
export async function payoutServiceFor(target: Target) {
  const { cachedSecret, providerSecretSchema } = await import('@shared/adapters/secrets');
  const { credentialsFromCachedSecret } = await import('@shared/adapters/credentials');
  const { PayoutServiceClient } = await import('@shared/providers/payout-client');
  const { cliProviderSettings } = await import('./settings');
  const settings = cliProviderSettings();
  const provider = new PayoutServiceClient({
    baseUrl: requireEnv(target, 'PAYOUT_API_BASE_URL'),
    signingProfile: settings.SIGNING_PROFILE,
    bearerPrefix: settings.BEARER_PREFIX,
    statusMap: settings.PROVIDER_STATUS_MAP,
    collectionOrder: { path: settings.COLLECTION_ORDER_PATH, fields: settings.COLLECTION_ORDER_BODY },
  });
  const credentials = credentialsFromCachedSecret(cachedSecret(requireEnv(target, 'PROVIDER_SECRET_ID'), providerSecretSchema));
  return { provider, credentials };
}

/**
 * The same dependencies for a target already resolved (the console builds them once per start),
 * with the log the use cases write their lines to.
 */
export async function operatorDepsFor(target: Target, log: Log): Promise<{ deps: OperatorDeps; close(): void }> {
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const { createEventStore } = await import('@shared/adapters/event-store');
  const { systemClock } = await import('@shared/adapters/system-clock');
  const { provider, credentials } = await payoutServiceFor(target);
  return {
    deps: {
      repository: createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME')),
      // The stored order notifications, read where resolve and retry would rest on "not found".
      notifications: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }),
      provider,
      credentials,
      clock: systemClock,
      log,
      telemetry: noTelemetry,
    },
    close: () => provider.close(),
  };
}

/**
 * The account fingerprints under the target's account key, for the payouts the CLI creates (enqueue,
 * retry); undefined for a stack deployed before the key existed, whose payouts are then compared by
 * the account's mask alone.
 */
export async function targetFingerprints(target: Target): Promise<AccountFingerprints | undefined> {
  const secretId = target.env[ACCOUNT_KEY_SECRET.env];
  if (!secretId) return undefined;
  const { accountFingerprintsFromSecret } = await import('@shared/adapters/account-fingerprint');
  return accountFingerprintsFromSecret(secretId);
}

/**
 * The signing keys of the target's provider secret, as the signing code takes them: what the CLI's
 * `signature` commands use without --secrets-file, and the console's calibration.
 */
export async function targetSigningSecrets(target: Target): Promise<SigningSecrets> {
  const { cachedSecret, providerSecretSchema } = await import('@shared/adapters/secrets');
  const secret = await cachedSecret(requireEnv(target, 'PROVIDER_SECRET_ID'), providerSecretSchema).get();
  return { partnerSecret: secret.partner_secret_key, merchantSecret: secret.merchant_secret_key };
}

/** The identity of a picked payout (for the use cases). */
export const identityOf = (payout: Payout): PayoutIdentity => payout.record.identity;
