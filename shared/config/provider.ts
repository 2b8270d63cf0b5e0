import * as v from '@shared/validation/valibot';
import { envBoolean, envInt, requiredString } from './env';

/**
 * Settings of the payout service client, shared by the worker and the reconciler
 * (docs/architecture.md, "Environment variables"). One schema, so the two can never read them differently.
 */
export const providerEnvSchema = v.object({
  PROVIDER_SECRET_ID: requiredString,
  PAYOUT_API_BASE_URL: requiredString,
  SIGNING_PROFILE: v.optional(v.string()),
  BEARER_PREFIX: envBoolean(true),
  PROVIDER_TIMEOUT_MS: envInt(10_000),
  PROVIDER_STATUS_MAP: v.optional(v.string()),
});

export type ProviderEnv = v.InferOutput<typeof providerEnvSchema>;
