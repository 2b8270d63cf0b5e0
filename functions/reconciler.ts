import type { Context, ScheduledEvent } from 'aws-lambda';
import { payoutProviderFrom } from '@shared/adapters/payout-provider';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { RECONCILE_DEFAULTS, createReconcilePayouts, runBudgetMs, type ReconcileSummary } from '@shared/app/reconcile-payouts';
import { watchSettingsFromDays } from '@shared/app/watch-final-payouts';
import { loadConfig } from '@shared/config/env';
import { reconcilerEnvSchema } from '@shared/config/reconciler';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';

/*
 * The scheduled reconciler: moves every open payout forward through GetPayout, or hands it to a
 * person (NEEDS_REVIEW). One run reads due payouts from the sparse index until its time budget ends.
 */

const config = loadConfig(reconcilerEnvSchema);
const payoutService = payoutProviderFrom(config);
const settings = {
  ...RECONCILE_DEFAULTS,
  reviewAfterMs: config.REVIEW_AFTER_MINUTES * 60_000,
  gatewayErrorReviewAfterMs: config.GATEWAY_ERROR_REVIEW_MINUTES * 60_000,
  notFoundGraceMs: config.NOT_FOUND_GRACE_MINUTES * 60_000,
  resubmitUnknownNotFound: config.RESUBMIT_UNKNOWN_NOT_FOUND,
  concurrency: config.RECONCILE_CONCURRENCY,
  watch: watchSettingsFromDays(config.watchDays),
};
const reconcilePayouts = createReconcilePayouts({
  repository: createPayoutRepository(config.PAYOUTS_TABLE_NAME),
  provider: payoutService.provider,
  credentials: payoutService.credentials,
  clock: systemClock,
  telemetry: telemetryFrom(metrics),
  log: logger,
  settings,
});
logger.info('reconciler settings', {
  ...payoutService.settings,
  resubmitUnknownNotFound: config.RESUBMIT_UNKNOWN_NOT_FOUND,
  reviewAfterMinutes: config.REVIEW_AFTER_MINUTES,
  gatewayErrorReviewMinutes: config.GATEWAY_ERROR_REVIEW_MINUTES,
  notFoundGraceMinutes: config.NOT_FOUND_GRACE_MINUTES,
  concurrency: config.RECONCILE_CONCURRENCY,
  ...config.watchDays,
});

async function lambdaHandler(_event: ScheduledEvent, context: Context): Promise<ReconcileSummary> {
  const budgetMs = runBudgetMs(settings.budgetMs, context.getRemainingTimeInMillis(), config.PROVIDER_TIMEOUT_MS);
  const summary = await reconcilePayouts({ budgetMs });
  logger.info('reconcile run finished', { ...summary });
  return summary;
}

/** EventBridge scheduled-rule handler. */
export const handler = lambdaChain(lambdaHandler);
