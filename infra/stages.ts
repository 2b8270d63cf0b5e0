import { type PayrelayConfigInput, PayrelayConfigError, parsePayrelayConfig, type PayrelayConfig } from './config';

/**
 * The typed stage files of this repository's CDK app. Pick one with `-c stage=<name>` (default `dev`).
 * Edit the provider base URLs here before the first deploy: the `.invalid` hosts below never resolve,
 * on purpose, so nothing is sent anywhere until someone puts the provider's real addresses in.
 * Bind each stage that moves real money to its AWS account and region (`account: '123456789012',
 * region: 'eu-west-1'`): the stacks then deploy only there, and `cdk synth`/`cdk deploy` with a
 * profile of another account or region is refused instead of putting this stage's settings in it.
 */
export const STAGES: Record<string, PayrelayConfigInput> = {
  dev: {
    stage: 'dev',
    payoutApiBaseUrl: 'https://payout-sandbox.provider.invalid',
    kycApiBaseUrl: 'https://kyc-sandbox.provider.invalid',
    removalPolicy: 'destroy',
    logRetentionDays: 14,
    logLevel: 'DEBUG',
    worker: { maxConcurrency: 2, batchSize: 5 },
  },
  prod: {
    stage: 'prod',
    payoutApiBaseUrl: 'https://payout.provider.invalid',
    kycApiBaseUrl: 'https://kyc.provider.invalid',
    removalPolicy: 'retain',
    egress: { staticIps: true, natGateways: 2 },
    logRetentionDays: 365,
    settings: { kycGating: true },
  },
};

/** Reads one CDK context value (`app.node.tryGetContext`). */
export type ContextReader = (key: string) => unknown;

/**
 * The `-c key=value` options that override the chosen stage file, with the config key each sets.
 * The CLI passes context values as strings; cdk.json may hold typed values.
 */
export const CONTEXT_OVERRIDES = {
  payoutApiBaseUrl: 'payoutApiBaseUrl',
  kycApiBaseUrl: 'kycApiBaseUrl',
  kycEnabled: 'kyc.enabled',
  staticEgress: 'egress.staticIps',
  natGateways: 'egress.natGateways',
  alarmEmail: 'alarms.email',
  alarmTopicArn: 'alarms.topicArn',
  removalPolicy: 'removalPolicy',
  signingProfile: 'signingProfile',
  workerMaxConcurrency: 'worker.maxConcurrency',
  egressElasticIps: 'egress.elasticIps',
  apiDomainName: 'api.domain.name',
  apiCertificateArn: 'api.domain.certificateArn',
  kycCatchUp: 'kycCatchUp.schedule',
  kycCatchUpLookbackHours: 'kycCatchUp.lookbackHours',
  deferIndexes: 'deferIndexes',
  tracing: 'tracing',
  encryptionKey: 'encryption.key',
  encryptionKeyArn: 'encryption.keyArn',
  permissionsBoundary: 'permissionsBoundary',
} as const;

type OverrideKey = keyof typeof CONTEXT_OVERRIDES;

const BOOLEAN_KEYS = new Set<OverrideKey>(['staticEgress', 'tracing', 'kycEnabled']);
const NUMBER_KEYS = new Set<OverrideKey>(['natGateways', 'workerMaxConcurrency', 'kycCatchUpLookbackHours']);

/** `eipalloc-0abc=203.0.113.10,eipalloc-0def=203.0.113.11`: the form `-c egressElasticIps=...` takes. */
function parseElasticIps(value: string): Array<{ allocationId: string; publicIp: string }> {
  return value.split(',').map((pair) => {
    const [allocationId, publicIp, extra] = pair.trim().split('=');
    if (!allocationId || !publicIp || extra !== undefined) {
      throw new PayrelayConfigError(`context key egressElasticIps: expected <allocation id>=<ip>[,...] (e.g. eipalloc-0abc=203.0.113.10), got "${value}"`);
    }
    return { allocationId, publicIp };
  });
}

function coerce(key: OverrideKey, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (key === 'egressElasticIps') return parseElasticIps(value);
  if (key === 'deferIndexes') return value.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (BOOLEAN_KEYS.has(key)) {
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw new PayrelayConfigError(`context key ${key}: expected true or false, got "${value}"`);
  }
  if (NUMBER_KEYS.has(key)) {
    if (!/^\d+$/.test(value)) throw new PayrelayConfigError(`context key ${key}: expected a whole number, got "${value}"`);
    return Number(value);
  }
  return value;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    node[part] = typeof child === 'object' && child !== null ? { ...(child as Record<string, unknown>) } : {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1] as string] = value;
}

/**
 * Resolves the configuration of the app: the stage file named by context `stage` (default `dev`),
 * then the context overrides of CONTEXT_OVERRIDES, validated with the configuration schema. Errors name the context key
 * or the config key at fault.
 */
export function resolveStageConfig(readContext: ContextReader, stages: Record<string, PayrelayConfigInput> = STAGES): PayrelayConfig {
  const stageName = readContext('stage') ?? 'dev';
  if (typeof stageName !== 'string' || !Object.hasOwn(stages, stageName)) {
    throw new PayrelayConfigError(
      `context key stage: unknown stage "${String(stageName)}"; known stages: ${Object.keys(stages).join(', ')} (infra/stages.ts)`,
    );
  }
  const merged: Record<string, unknown> = { ...(stages[stageName] as Record<string, unknown>) };
  for (const [contextKey, configPath] of Object.entries(CONTEXT_OVERRIDES) as Array<[OverrideKey, string]>) {
    const raw = readContext(contextKey);
    if (raw !== undefined) setPath(merged, configPath, coerce(contextKey, raw));
  }
  return parsePayrelayConfig(merged, `stage "${stageName}" from infra/stages.ts with context overrides`);
}
