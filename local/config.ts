import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as v from '@shared/validation/valibot';
import { REPO_ROOT } from './lambda';

/** Path of the documented DEV-ONLY local configuration. */
export const LOCAL_CONFIG_PATH = resolve(REPO_ROOT, 'local/config.json');

/** Thrown when local/config.json (or a file given with --config) is unreadable or malformed. */
export class LocalConfigError extends Error {
  override name = 'LocalConfigError';
}

const port = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535));
const text = (min: number) => v.pipe(v.string(), v.minLength(min));
const textRecord = v.optional(v.record(v.string(), v.string()), {});

/** Shape of local/config.json; keys starting with `_` are comments. */
export const localConfigSchema = v.object({
  stage: v.optional(text(1), 'local'),
  gatewayPort: v.optional(port, 3000),
  simulatorPort: v.optional(port, 4010),
  /** Reconciler interval; absent means the deployed schedule (DEFAULT_RECONCILE_EVERY_MINUTES). */
  reconcileEverySeconds: v.optional(v.pipe(v.number(), v.gtValue(0))),
  visibilityTimeoutSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 30),
  partner: v.object({ partner_code: text(1), email: text(3), platform_merchant_id: v.optional(text(1)) }),
  kycApp: v.object({ name: text(1), email: text(3), origin: v.array(v.string()) }),
  kycCallbackToken: text(16),
  external: v.optional(v.object({ provider: textRecord, kyc: textRecord }), {}),
  handlerEnv: textRecord,
  /** Options passed to startSimulator (see docs/simulator.md). */
  simulator: v.optional(v.record(v.string(), v.unknown()), {}),
});
export type LocalConfig = v.InferOutput<typeof localConfigSchema>;

/** Drops the `_comment`-style keys so only settings remain. */
function withoutComments<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([k]) => !k.startsWith('_'))) as T;
}

/** Reads and validates the local configuration; the error names the file and the bad fields. */
export function loadLocalConfig(path = LOCAL_CONFIG_PATH): LocalConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new LocalConfigError(`no such file: ${path} (--config names the local config file; the default is ${LOCAL_CONFIG_PATH})`);
    if (error instanceof SyntaxError) throw new LocalConfigError(`${path} is not valid JSON: ${error.message}`);
    throw new LocalConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const parsed = v.safeParse(localConfigSchema, raw);
  if (!parsed.success) throw new LocalConfigError(`invalid ${path}: ${v.describeIssues(parsed.issues)}`);
  const config = parsed.output;
  return {
    ...config,
    external: { provider: withoutComments(config.external.provider), kyc: withoutComments(config.external.kyc) },
    handlerEnv: withoutComments(config.handlerEnv),
    simulator: withoutComments(config.simulator),
  };
}
