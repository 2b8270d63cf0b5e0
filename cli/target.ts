import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { loadSharedConfigFiles } from '@smithy/core/config';
import { OUTPUT, PROVIDER_CLIENT_SETTINGS } from '@infra/outputs';
import { ACCOUNT_KEY_SECRET, COLLECTIONS_TABLE, EVENTS_TABLE, KYC_SECRET, KYC_TABLE, PAYOUTS_QUEUE, PAYOUTS_TABLE, PROVIDER_SECRET, QUARANTINE_TABLE } from '@shared/config/resources';
import { readLocalState, LOCAL_STATE_PATH, type LocalStackUrls } from '@local/state';
import { CliError, EXIT, describeError } from './output';

/** Global options every command accepts. */
export interface GlobalOptions {
  readonly json?: boolean;
  readonly stack?: string;
  readonly profile?: string;
  readonly region?: string;
  readonly providerUrl?: string;
  readonly kycUrl?: string;
}

/** What a command talks to: the running local stack or a deployed CloudFormation stack. */
export interface Target {
  readonly kind: 'local' | 'deployed';
  readonly label: string;
  /** Env for the AWS SDK and the shared adapters (table, queue and secret names, endpoints). */
  readonly env: Record<string, string>;
  /** Known URLs; a deployed stack has no simulator. */
  readonly urls: Partial<LocalStackUrls>;
  /** Env variables the shell may set that this target's functions do not: removed, so the defaults apply as they do there. */
  readonly unset?: readonly string[];
  /**
   * True for a deployed stack whose stage leaves the KYC service out (`kyc.enabled: false`, its
   * output KycNotDeployed): requireEnv then refuses every KYC variable with KycNotDeployedError.
   */
  readonly kycNotDeployed?: boolean;
}

/** The env variables only KYC work reads (the KYC table, the KYC secret, the KYC service). */
const KYC_ENV: ReadonlySet<string> = new Set([KYC_TABLE.env, KYC_SECRET.env, 'KYC_API_BASE_URL']);

/**
 * A KYC command, or the console's KYC page, against a stack whose stage leaves the KYC service out.
 * Its words say how to turn KYC on, since that is the only way such a command can work there.
 */
export class KycNotDeployedError extends CliError {
  override name = 'KycNotDeployedError';
  constructor(label: string) {
    super(
      `KYC is not deployed on ${label}: its stage has kyc.enabled: false (output ${OUTPUT.kycNotDeployed}), so it has no KYC route, no KYC function and no access to the KYC table or secret. ` +
        'To use KYC there, set kyc: { enabled: true } and kycApiBaseUrl in its stage (infra/stages.ts, or -c kycEnabled=true -c kycApiBaseUrl=https://...), deploy, ' +
        'then put the KYC secret (payrelay secrets put kyc --new-callback-token); docs/deploy.md, "A stage without KYC"',
      EXIT.notFound,
    );
  }
}

/**
 * The env variable each CloudFormation output of the app stack fills (output keys: infra/outputs.ts,
 * docs/deploy.md). Outputs are matched by key, also behind a construct prefix.
 */
export const STACK_OUTPUTS: Readonly<Record<string, string>> = {
  [OUTPUT.payoutsTableName]: PAYOUTS_TABLE.env,
  [OUTPUT.eventsTableName]: EVENTS_TABLE.env,
  [OUTPUT.quarantineTableName]: QUARANTINE_TABLE.env,
  [OUTPUT.collectionsTableName]: COLLECTIONS_TABLE.env,
  [OUTPUT.kycTableName]: KYC_TABLE.env,
  [OUTPUT.payoutsQueueUrl]: PAYOUTS_QUEUE.env,
  [OUTPUT.payoutsDlqUrl]: PAYOUTS_QUEUE.deadLetterQueue.env,
  [OUTPUT.providerSecretArn]: PROVIDER_SECRET.env,
  [OUTPUT.kycSecretArn]: KYC_SECRET.env,
  [OUTPUT.accountKeySecretArn]: ACCOUNT_KEY_SECRET.env,
  [OUTPUT.payoutApiBaseUrl]: 'PAYOUT_API_BASE_URL',
  [OUTPUT.kycApiBaseUrl]: 'KYC_API_BASE_URL',
};

/** Maps stack outputs to env variables by the suffix of their key. */
export function envFromOutputs(outputs: ReadonlyArray<{ OutputKey?: string; OutputValue?: string }>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { OutputKey, OutputValue } of outputs) {
    if (!OutputKey || OutputValue === undefined) continue;
    const known = Object.keys(STACK_OUTPUTS).find((k) => OutputKey === k || OutputKey.endsWith(k));
    if (known) env[STACK_OUTPUTS[known] as string] = OutputValue;
  }
  return env;
}

/**
 * Refuses a --profile that no AWS config file defines. The SDK would otherwise report what it could
 * not find under that name (no region, then no credentials), which hides the typo.
 */
async function assertProfileDefined(profile: string): Promise<void> {
  const { configFile, credentialsFile } = await loadSharedConfigFiles({ ignoreCache: true });
  if (configFile[profile] ?? credentialsFile[profile]) return;
  const files = `${process.env.AWS_CONFIG_FILE ?? '~/.aws/config'} or ${process.env.AWS_SHARED_CREDENTIALS_FILE ?? '~/.aws/credentials'}`;
  throw new CliError(
    `no AWS profile named ${profile} in ${files}: set it up (e.g. \`aws configure sso --profile ${profile}\`), or pass the name of one that exists with --profile`,
    EXIT.unreachable,
  );
}

/**
 * The payout service client's settings of the stack's functions (output ProviderClientSettings), put
 * into `env`: the CLI then signs and reads GetPayout as the reconciler does, whatever the shell says.
 * Returns the settings the functions leave at their default, for the shell's values to be removed. A
 * stack deployed before the output existed has none: the shell's settings stay (export the stage's).
 */
function providerClientSettings(stackName: string, outputs: ReadonlyArray<{ OutputKey?: string; OutputValue?: string }>, env: Record<string, string>): string[] {
  const text = outputs.find((o) => o.OutputKey === OUTPUT.providerClientSettings || o.OutputKey?.endsWith(OUTPUT.providerClientSettings))?.OutputValue;
  if (text === undefined) return [];
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch {
    settings = undefined;
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new CliError(`stack ${stackName}: its ${OUTPUT.providerClientSettings} output is not a JSON object; deploy it again with this version`, EXIT.invalidInput);
  }
  const unset: string[] = [];
  for (const name of PROVIDER_CLIENT_SETTINGS) {
    const value = (settings as Record<string, unknown>)[name];
    if (typeof value === 'string') env[name] = value;
    else unset.push(name);
  }
  return unset;
}

async function deployedTarget(options: GlobalOptions): Promise<Target> {
  const stackName = options.stack as string;
  if (options.profile) await assertProfileDefined(options.profile);
  // Every AWS call of this run uses --profile (applyTargetEnv sets it for the adapters); set it now
  // too, so a credentials error of this first call names the profile given, not "default".
  if (options.profile) process.env.AWS_PROFILE = options.profile;
  const client = new CloudFormationClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  });
  let outputs;
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    outputs = out.Stacks?.[0]?.Outputs ?? [];
  } catch (error) {
    const notFound = (error as Error).name === 'ValidationError' && /does not exist/.test((error as Error).message);
    const why = /^Region is missing/.test((error as Error).message)
      ? `no AWS region: pass --region, or set a region for profile ${options.profile ?? process.env.AWS_PROFILE ?? 'default'}`
      : describeError(error);
    throw new CliError(`cannot read the outputs of stack ${stackName}: ${why}`, notFound ? EXIT.notFound : EXIT.unreachable);
  } finally {
    client.destroy();
  }
  const env = envFromOutputs(outputs);
  const unset = providerClientSettings(stackName, outputs, env);
  if (options.profile) env.AWS_PROFILE = options.profile;
  if (options.region) env.AWS_REGION = options.region;
  const kycNotDeployed = outputs.some((o) => o.OutputKey === OUTPUT.kycNotDeployed || o.OutputKey?.endsWith(OUTPUT.kycNotDeployed));
  const apiUrl = outputs.find((o) => o.OutputKey === OUTPUT.apiUrl)?.OutputValue?.replace(/\/$/, '');
  const notificationUrl = outputs.find((o) => o.OutputKey === OUTPUT.payoutNotificationUrl)?.OutputValue;
  return {
    kind: 'deployed',
    label: `stack ${stackName}`,
    env,
    unset,
    ...(kycNotDeployed ? { kycNotDeployed } : {}),
    urls: {
      ...(apiUrl ? { gateway: apiUrl } : {}),
      ...(notificationUrl ? { payoutNotification: notificationUrl } : {}),
      ...(env.PAYOUT_API_BASE_URL ? { payoutApi: env.PAYOUT_API_BASE_URL } : {}),
      ...(env.KYC_API_BASE_URL ? { kycApi: env.KYC_API_BASE_URL } : {}),
    },
  };
}

/**
 * Resolves the target from the global options: `--stack` means a deployed stack (its outputs via
 * CloudFormation, credentials from `--profile`); otherwise the local stack recorded by `npm start`.
 * `--provider-url` / `--kyc-url` override the provider base URLs of either.
 */
export async function resolveTarget(options: GlobalOptions): Promise<Target> {
  let target: Target;
  if (options.stack) target = await deployedTarget(options);
  else {
    const state = readLocalState();
    if (!state) {
      throw new CliError(
        `no local stack is running (no live ${LOCAL_STATE_PATH}): start one with \`npm start\`, or target a deployed stack with --stack <name> --profile <aws profile>`,
        EXIT.unreachable,
      );
    }
    target = { kind: 'local', label: `local stack (pid ${state.pid})`, env: { ...state.env }, urls: state.urls };
  }
  const env = { ...target.env };
  const urls = { ...target.urls };
  if (options.providerUrl) {
    env.PAYOUT_API_BASE_URL = options.providerUrl;
    urls.payoutApi = options.providerUrl;
  }
  if (options.kycUrl) {
    env.KYC_API_BASE_URL = options.kycUrl;
    urls.kycApi = options.kycUrl;
  }
  return { ...target, env, urls };
}

/**
 * Puts the target's env into process.env. The shared adapters create their SDK clients at module
 * load from these variables, so commands call this BEFORE dynamically importing any adapter.
 */
export function applyTargetEnv(target: Target): void {
  for (const name of target.unset ?? []) delete process.env[name];
  Object.assign(process.env, target.env);
}

/**
 * Reads a required env variable of the target, with an error that says what is missing. The one place
 * a KYC command meets a stage without KYC: every KYC variable is refused there with KycNotDeployedError,
 * whatever the shell or --kyc-url says, before anything is called.
 */
export function requireEnv(target: Target, name: string): string {
  if (target.kycNotDeployed && KYC_ENV.has(name)) throw new KycNotDeployedError(target.label);
  const value = target.env[name];
  if (!value) throw new CliError(`${target.label} does not define ${name}`);
  return value;
}
