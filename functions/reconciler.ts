import type { Context, ScheduledEvent } from 'aws-lambda';
import { createPayoutCheckQueue } from '@shared/adapters/payout-check-queue';
import { payoutProviderFrom } from '@shared/adapters/payout-provider';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { createReconciler, runBudgetMs, type ReconcileSummary } from '@shared/app/reconcile-payouts';
import { loadConfig } from '@shared/config/env';
import { describeReconcileSettings, reconcileSettingsFrom, reconcilerEnvSchema } from '@shared/config/reconciler';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';

/*
 * The scheduled reconciler: moves every open payout forward through GetPayout, or hands it to a
 * person (NEEDS_REVIEW). One run reads due payouts from the sparse index until its time budget ends.
 * With the delayed checks (functions/payout-checker.ts) doing the prompt looks, it is the safety net.
 */

const config = loadConfig(reconcilerEnvSchema);
const payoutService = payoutProviderFrom(config);
const settings = reconcileSettingsFrom(config);
const reconciler = createReconciler({
  repository: createPayoutRepository(config.PAYOUTS_TABLE_NAME),
  provider: payoutService.provider,
  credentials: payoutService.credentials,
  checks: createPayoutCheckQueue(config.PAYOUT_CHECKS_QUEUE_URL),
  clock: systemClock,
  telemetry: telemetryFrom(metrics),
  log: logger,
  settings,
});
logger.info('reconciler settings', { ...payoutService.settings, ...describeReconcileSettings(config) });

async function lambdaHandler(_event: ScheduledEvent, context: Context): Promise<ReconcileSummary> {
  const budgetMs = runBudgetMs(settings.budgetMs, context.getRemainingTimeInMillis(), config.PROVIDER_TIMEOUT_MS);
  const summary = await reconciler.sweep({ budgetMs });
  logger.info('reconcile run finished', { ...summary });
  return summary;
}

/** EventBridge scheduled-rule handler. */
export const handler = lambdaChain(lambdaHandler);
