import type { ProviderEnv } from '@shared/config/provider';
import type { CredentialsSource, PayoutProvider } from '@shared/ports/payouts';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { DEFAULT_STATUS_MAP, describeStatusMap } from '@shared/providers/status-map';
import { credentialsFromCachedSecret } from './credentials';
import { cachedSecret, providerSecretSchema } from './secrets';
import { xrayTracing } from './tracing';

/** The payout service as a handler uses it: the client, its cached credentials, and what to log at start-up. */
export interface PayoutProviderWiring {
  readonly provider: PayoutProvider;
  readonly credentials: CredentialsSource;
  /** The settings in force, without secrets: handlers log them once at module load. */
  readonly settings: Readonly<Record<string, string | number | boolean>>;
}

/**
 * Builds the payout service client and its credentials from the provider settings. The worker and
 * the reconciler both call it, so a setting can never mean one thing to one and another to the other.
 */
export function payoutProviderFrom(env: ProviderEnv): PayoutProviderWiring {
  const signingProfile = env.SIGNING_PROFILE;
  const statusMap = env.PROVIDER_STATUS_MAP;
  return {
    provider: new PayoutServiceClient({
      baseUrl: env.PAYOUT_API_BASE_URL,
      signingProfile,
      bearerPrefix: env.BEARER_PREFIX,
      timeoutMs: env.PROVIDER_TIMEOUT_MS,
      statusMap,
      tracing: xrayTracing,
    }),
    credentials: credentialsFromCachedSecret(cachedSecret(env.PROVIDER_SECRET_ID, providerSecretSchema)),
    settings: {
      signingProfile: signingProfile.name,
      bearerPrefix: env.BEARER_PREFIX,
      providerTimeoutMs: env.PROVIDER_TIMEOUT_MS,
      statusMapOverridden: statusMap !== DEFAULT_STATUS_MAP,
      // The table in force (defaults merged with PROVIDER_STATUS_MAP), words grouped by outcome.
      statusMap: describeStatusMap(statusMap),
    },
  };
}
