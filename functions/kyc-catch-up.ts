import { createEventStore } from '@shared/adapters/event-store';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { cachedSecret, kycSecretSchema } from '@shared/adapters/secrets';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { xrayTracing } from '@shared/adapters/tracing';
import { catchUpKycCallbacks, type CatchUpResult } from '@shared/app/catch-up-kyc-callbacks';
import { loadConfig } from '@shared/config/env';
import { kycCatchUpEnvSchema } from '@shared/config/kyc-catch-up';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';
import { KycServiceClient } from '@shared/providers/kyc-client';

/*
 * The scheduled KYC catch-up (deployed with the stage setting `kycCatchUp`): the same use case as
 * `payrelay kyc catch-up --since <look-back>`. Every recovered callback counts KycCallbacksRecovered,
 * which has its own alarm: a recovery means deliveries were missed.
 */

const config = loadConfig(kycCatchUpEnvSchema);
const secret = cachedSecret(config.KYC_SECRET_ID, kycSecretSchema);
const deps = {
  events: createEventStore({ tableName: config.EVENTS_TABLE_NAME }),
  subjects: createKycRepository({ tableName: config.KYC_TABLE_NAME }),
  responses: new KycServiceClient({ baseUrl: config.KYC_API_BASE_URL, timeoutMs: config.PROVIDER_TIMEOUT_MS, tracing: xrayTracing }),
  retentionDays: config.EVENT_RETENTION_DAYS,
  clock: systemClock,
  log: logger,
  telemetry: telemetryFrom(metrics),
};

async function lambdaHandler(): Promise<CatchUpResult> {
  const since = new Date(systemClock.now().getTime() - config.KYC_CATCH_UP_LOOKBACK_HOURS * 3_600_000);
  return catchUpKycCallbacks(deps, { appId: (await secret.get()).app_id, since });
}

/** EventBridge scheduled-rule handler; an unreadable answer or an unreachable service fails the run (KycCatchUpErrors). */
export const handler = lambdaChain(lambdaHandler);
