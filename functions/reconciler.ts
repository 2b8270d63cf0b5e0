import type { Context, ScheduledEvent } from 'aws-lambda';
import { reconcilerWiringFrom } from '@shared/adapters/reconciler-wiring';
import { createReconciler, runBudgetMs, type ReconcileSummary } from '@shared/app/reconcile-payouts';
import { loadConfig } from '@shared/config/env';
import { reconcilerEnvSchema } from '@shared/config/reconciler';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { logger } from '@shared/observability/logger';

/*
 * The scheduled reconciler: moves every open payout forward through GetPayout, or hands it to a
 * person (NEEDS_REVIEW). One run reads due payouts from the sparse index until its time budget ends.
 * With the delayed checks (functions/payout-checker.ts) doing the prompt looks, it is the safety net.
 */

const config = loadConfig(reconcilerEnvSchema);
const wiring = reconcilerWiringFrom(config);
const reconciler = createReconciler(wiring.deps);
logger.info('reconciler settings', wiring.startupSettings);

async function lambdaHandler(event: ScheduledEvent, context: Context): Promise<ReconcileSummary> {
  const budgetMs = runBudgetMs(wiring.deps.settings.budgetMs, context.getRemainingTimeInMillis(), config.PROVIDER_TIMEOUT_MS);
  // The schedule's time decides whether this run counts the review gauge; an invocation without one does not count.
  const scheduled = Date.parse(event?.time ?? '');
  const summary = await reconciler.sweep({ budgetMs, ...(Number.isNaN(scheduled) ? {} : { scheduledAt: new Date(scheduled) }) });
  logger.info('reconcile run finished', { ...summary });
  return summary;
}

/** EventBridge scheduled-rule handler. */
export const handler = lambdaChain(lambdaHandler);
