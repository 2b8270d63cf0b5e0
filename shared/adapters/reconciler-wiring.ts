import { describeReconcileSettings, reconcileSettingsFrom, type ReconcilerEnv } from '@shared/config/reconciler';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';
import { createEventStore } from './event-store';
import { createPayoutCheckQueue } from './payout-check-queue';
import { payoutProviderFrom } from './payout-provider';
import { createPayoutSweepStore } from './payout-sweep-store';
import { systemClock } from './system-clock';
import { telemetryFrom } from './telemetry';

/**
 * Everything the reconciler's use case runs on, built from the reconciler settings. The scheduled
 * sweep and the payout checker both take it, so the two can never decide a payout differently;
 * `startupSettings` is what each logs once at module load (no secrets).
 */
export function reconcilerWiringFrom(config: ReconcilerEnv) {
  const payoutService = payoutProviderFrom(config);
  return {
    deps: {
      repository: createPayoutSweepStore(config.PAYOUTS_TABLE_NAME),
      provider: payoutService.provider,
      credentials: payoutService.credentials,
      checks: createPayoutCheckQueue(config.PAYOUT_CHECKS_QUEUE_URL),
      // Read only where "not found" would decide a payout never acknowledged (ReconcileDeps.notifications).
      notifications: createEventStore({ tableName: config.EVENTS_TABLE_NAME }),
      clock: systemClock,
      telemetry: telemetryFrom(metrics),
      log: logger,
      settings: reconcileSettingsFrom(config),
    },
    startupSettings: { ...payoutService.settings, ...describeReconcileSettings(config) },
  };
}
