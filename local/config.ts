import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as z from 'zod';
import { REPO_ROOT } from './lambda';

/** Path of the documented DEV-ONLY local configuration. */
export const LOCAL_CONFIG_PATH = resolve(REPO_ROOT, 'local/config.json');

/** Thrown when local/config.json (or a file given with --config) is unreadable or malformed. */
export class LocalConfigError extends Error {
  override name = 'LocalConfigError';
}

const port = z.number().int().min(0).max(65535);

/** Shape of local/config.json; keys starting with `_` are comments. */
export const localConfigSchema = z.object({
  stage: z.string().min(1).default('local'),
  gatewayPort: port.default(3000),
  simulatorPort: port.default(4010),
  /** Reconciler interval; absent means the deployed schedule (DEFAULT_RECONCILE_EVERY_MINUTES). */
  reconcileEverySeconds: z.number().positive().optional(),
  visibilityTimeoutSeconds: z.number().int().min(0).default(30),
  partner: z.object({ partner_code: z.string().min(1), email: z.string().min(3), platform_merchant_id: z.string().min(1).optional() }),
  kycApp: z.object({ name: z.string().min(1), email: z.string().min(3), origin: z.array(z.string()) }),
  kycCallbackToken: z.string().min(16),
  external: z
    .object({
      provider: z.record(z.string(), z.string()).default({}),
      kyc: z.record(z.string(), z.string()).default({}),
    })
    .default({ provider: {}, kyc: {} }),
  handlerEnv: z.record(z.string(), z.string()).default({}),
  /** Options passed to startSimulator (see docs/simulator.md). */
  simulator: z.record(z.string(), z.unknown()).default({}),
});
export type LocalConfig = z.infer<typeof localConfigSchema>;

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
    throw new LocalConfigError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const parsed = localConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new LocalConfigError(`invalid ${path}: ${fields}`);
  }
  const config = parsed.data;
  return {
    ...config,
    external: { provider: withoutComments(config.external.provider), kyc: withoutComments(config.external.kyc) },
    handlerEnv: withoutComments(config.handlerEnv),
    simulator: withoutComments(config.simulator),
  };
}
