import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import * as z from 'zod';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { cachedSecret, providerSecretSchema } from '@shared/adapters/secrets';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { RECONCILE_DEFAULTS, createReconcilePayouts, type ReconcileSummary } from '@shared/app/reconcile-payouts';
import { WATCH_DEFAULTS, watchSettingsFromDays } from '@shared/app/watch-final-payouts';
import { envBoolean, envInt, loadConfig, requiredString } from '@shared/config/env';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { parseStatusMap } from '@shared/providers/status-map';
import { resolveSigningProfile } from '@shared/signing';

/*
 * The scheduled reconciler: moves every open payout forward through GetPayout, or hands it to a
 * person (NEEDS_REVIEW). One run reads due payouts from the sparse index until its time budget ends.
 */

const config = loadConfig(
  z.object({
    PAYOUTS_TABLE_NAME: requiredString,
    PROVIDER_SECRET_ID: requiredString,
    PAYOUT_API_BASE_URL: requiredString,
    SIGNING_PROFILE: z.string().optional(),
    BEARER_PREFIX: envBoolean(true),
    PROVIDER_TIMEOUT_MS: envInt(10_000),
    PROVIDER_STATUS_MAP: z.string().optional(),
    RESUBMIT_UNKNOWN_NOT_FOUND: envBoolean(false),
    REVIEW_AFTER_MINUTES: envInt(1440),
    NOT_FOUND_GRACE_MINUTES: envInt(15),
    RECONCILE_CONCURRENCY: envInt(RECONCILE_DEFAULTS.concurrency),
    REVIEW_WATCH_HOURLY_DAYS: envInt(WATCH_DEFAULTS.reviewHourlyDays),
    REVIEW_WATCH_DAILY_DAYS: envInt(WATCH_DEFAULTS.reviewDailyDays),
    REVERSAL_WATCH_DAYS: envInt(WATCH_DEFAULTS.reversalWatchDays),
  }),
);

const signingProfile = resolveSigningProfile(config.SIGNING_PROFILE);
const settings = {
  reviewAfterMs: config.REVIEW_AFTER_MINUTES * 60_000,
  notFoundGraceMs: config.NOT_FOUND_GRACE_MINUTES * 60_000,
  resubmitUnknownNotFound: config.RESUBMIT_UNKNOWN_NOT_FOUND,
  submitStaleMs: RECONCILE_DEFAULTS.submitStaleMs,
  concurrency: config.RECONCILE_CONCURRENCY,
  pageSize: RECONCILE_DEFAULTS.pageSize,
  budgetMs: RECONCILE_DEFAULTS.budgetMs,
  watch: watchSettingsFromDays({
    reviewHourlyDays: config.REVIEW_WATCH_HOURLY_DAYS,
    reviewDailyDays: config.REVIEW_WATCH_DAILY_DAYS,
    reversalWatchDays: config.REVERSAL_WATCH_DAYS,
  }),
};

const reconcilePayouts = createReconcilePayouts({
  repository: createPayoutRepository(config.PAYOUTS_TABLE_NAME),
  provider: new PayoutServiceClient({
    baseUrl: config.PAYOUT_API_BASE_URL,
    signingProfile,
    bearerPrefix: config.BEARER_PREFIX,
    timeoutMs: config.PROVIDER_TIMEOUT_MS,
    statusMap: parseStatusMap(config.PROVIDER_STATUS_MAP),
  }),
  credentials: credentialsFromCachedSecret(cachedSecret(config.PROVIDER_SECRET_ID, providerSecretSchema)),
  clock: systemClock,
  telemetry: telemetryFrom(metrics),
  log: logger,
  settings,
});

logger.info('reconciler settings', {
  signingProfile: signingProfile.name,
  bearerPrefix: config.BEARER_PREFIX,
  providerTimeoutMs: config.PROVIDER_TIMEOUT_MS,
  statusMapOverridden: config.PROVIDER_STATUS_MAP !== undefined && config.PROVIDER_STATUS_MAP !== '',
  resubmitUnknownNotFound: config.RESUBMIT_UNKNOWN_NOT_FOUND,
  reviewAfterMinutes: config.REVIEW_AFTER_MINUTES,
  notFoundGraceMinutes: config.NOT_FOUND_GRACE_MINUTES,
  concurrency: config.RECONCILE_CONCURRENCY,
  reviewWatchHourlyDays: config.REVIEW_WATCH_HOURLY_DAYS,
  reviewWatchDailyDays: config.REVIEW_WATCH_DAILY_DAYS,
  reversalWatchDays: config.REVERSAL_WATCH_DAYS,
});

async function lambdaHandler(_event: ScheduledEvent, context: Context): Promise<ReconcileSummary> {
  // Stop taking new pages early enough that calls in flight (each bounded by the provider time-out) finish.
  const remaining = context.getRemainingTimeInMillis();
  const budgetMs = Math.max(0, Math.min(settings.budgetMs, remaining - config.PROVIDER_TIMEOUT_MS - 5_000));
  const summary = await reconcilePayouts({ budgetMs });
  logger.info('reconcile run finished', { ...summary });
  return summary;
}

/** EventBridge scheduled-rule handler. */
export const handler = middy(lambdaHandler).use(injectLambdaContext(logger)).use(logMetrics(metrics));
