import { parseStatusMap } from '@shared/providers/status-map';
import { DEFAULT_SIGNING_PROFILE, resolveSigningProfile } from '@shared/signing/profile';
import * as v from '@shared/validation/valibot';
import { envBoolean, envInt, envSetting, requiredString } from './env';

/** SIGNING_PROFILE, read into the profile it names: the payout clients' and the notification receiver's. */
export const signingProfileSetting = envSetting(resolveSigningProfile, DEFAULT_SIGNING_PROFILE.name);

/**
 * Settings of the payout service client, shared by the worker and the reconciler
 * (docs/architecture.md, "Environment variables"). One schema, so the two can never read them differently.
 */
export const providerEnvSchema = v.object({
  PROVIDER_SECRET_ID: requiredString,
  PAYOUT_API_BASE_URL: requiredString,
  SIGNING_PROFILE: signingProfileSetting,
  BEARER_PREFIX: envBoolean(true),
  PROVIDER_TIMEOUT_MS: envInt(10_000),
  PROVIDER_STATUS_MAP: envSetting(parseStatusMap, 'the built-in status words only'),
});

export type ProviderEnv = v.InferOutput<typeof providerEnvSchema>;
