import { envSetting, loadConfig } from '@shared/config/env';
import { providerEnvSchema } from '@shared/config/provider';
import type { SigningProfile } from '@shared/signing/profile';
import { DEFAULT_COLLECTION_ORDER_PATH, parseCollectionOrderBody, parseCollectionOrderPath } from '@shared/providers/collection-order-shape';
import * as v from '@shared/validation/valibot';

/**
 * The settings of the payout service client that the CLI takes from the shell's environment: the
 * functions' own entries (so `BEARER_PREFIX=off` means the same to both), and the collection-order
 * request's shape, which only the CLI sends.
 */
const cliProviderSettingsSchema = v.object({
  SIGNING_PROFILE: providerEnvSchema.entries.SIGNING_PROFILE,
  BEARER_PREFIX: providerEnvSchema.entries.BEARER_PREFIX,
  PROVIDER_STATUS_MAP: providerEnvSchema.entries.PROVIDER_STATUS_MAP,
  COLLECTION_ORDER_PATH: envSetting(parseCollectionOrderPath, DEFAULT_COLLECTION_ORDER_PATH),
  COLLECTION_ORDER_BODY: envSetting(parseCollectionOrderBody, 'partner_order_id, amount_to_collect, timestamp'),
});

/**
 * Reads them once per command.
 * @throws ConfigError naming every setting that cannot be used
 */
export function cliProviderSettings(env: NodeJS.ProcessEnv = process.env): v.InferOutput<typeof cliProviderSettingsSchema> {
  return loadConfig(cliProviderSettingsSchema, env);
}

const signingProfileSchema = v.object({ SIGNING_PROFILE: providerEnvSchema.entries.SIGNING_PROFILE });

/**
 * SIGNING_PROFILE of the shell, read as the functions read theirs (the `signature` commands' default).
 * @throws ConfigError naming it when it cannot be used
 */
export function cliSigningProfile(env: NodeJS.ProcessEnv = process.env): SigningProfile {
  return loadConfig(signingProfileSchema, env).SIGNING_PROFILE;
}
