import { GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT, RECONCILE_DEFAULTS, type ReconcileSettings } from '@shared/app/reconcile-payouts';
import { WATCH_DEFAULTS, watchSettingsFromDays } from '@shared/app/watch-final-payouts';
import * as v from '@shared/validation/valibot';
import { envBoolean, envInt, envPositiveNumber, requiredString } from './env';
import { DEFAULT_RECONCILE_EVERY_MINUTES } from './functions';
import { providerEnvSchema } from './provider';

/**
 * The settings of the reconciler and of the payout checker, which runs the same use case on delayed
 * checks (docs/architecture.md, "Environment variables"). The defaults are the use cases' own, so a
 * setting left out means the same here as in a test that builds the use case.
 */
export const reconcilerEnvSchema = v.pipe(
  v.object({
    ...providerEnvSchema.entries,
    PAYOUTS_TABLE_NAME: requiredString,
    /** The checks queue: each write that leaves a payout open schedules its next delayed check there. */
    PAYOUT_CHECKS_QUEUE_URL: requiredString,
    /**
     * The events table: the stored order notifications naming a payout are read where "not found for
     * the whole grace period" would decide it (an authentic one is the provider acknowledging it).
     */
    EVENTS_TABLE_NAME: requiredString,
    RESUBMIT_UNKNOWN_NOT_FOUND: envBoolean(false),
    /**
     * An open payout this old goes to NEEDS_REVIEW. Decimals are allowed (0.1 = 6 s) so a local stack's
     * end-to-end test reaches NEEDS_REVIEW in seconds; a deployed stage takes whole minutes (infra config).
     */
    REVIEW_AFTER_MINUTES: envPositiveNumber(1440),
    /** An open payout whose provider reports a gateway error word goes to NEEDS_REVIEW at this age instead. */
    GATEWAY_ERROR_REVIEW_MINUTES: envInt(GATEWAY_ERROR_REVIEW_MINUTES_DEFAULT),
    NOT_FOUND_GRACE_MINUTES: envInt(15),
    /** GetPayout calls at once. */
    RECONCILE_CONCURRENCY: envInt(RECONCILE_DEFAULTS.concurrency),
    /**
     * The schedule's interval (infra sets the stage's reconcileEveryMinutes), so that one run of each
     * window of the PayoutsAwaitingReview gauge counts. Decimals for a local stack's seconds.
     */
    RECONCILE_EVERY_MINUTES: envPositiveNumber(DEFAULT_RECONCILE_EVERY_MINUTES),
    /** NEEDS_REVIEW payouts are asked about hourly for this many days, then daily for REVIEW_WATCH_DAILY_DAYS. */
    REVIEW_WATCH_HOURLY_DAYS: envInt(WATCH_DEFAULTS.reviewHourlyDays),
    REVIEW_WATCH_DAILY_DAYS: envInt(WATCH_DEFAULTS.reviewDailyDays),
    /** SUCCEEDED payouts are asked about 1, 2, ... this many days after they settled, in case the money comes back. */
    REVERSAL_WATCH_DAYS: envInt(WATCH_DEFAULTS.reversalWatchDays),
  }),
  v.transform(({ REVIEW_WATCH_HOURLY_DAYS, REVIEW_WATCH_DAILY_DAYS, REVERSAL_WATCH_DAYS, ...rest }) => ({
    ...rest,
    watchDays: { reviewHourlyDays: REVIEW_WATCH_HOURLY_DAYS, reviewDailyDays: REVIEW_WATCH_DAILY_DAYS, reversalWatchDays: REVERSAL_WATCH_DAYS },
  })),
);

export type ReconcilerEnv = v.InferOutput<typeof reconcilerEnvSchema>;

/** The use case's settings from the environment: the same for the scheduled sweep and the delayed checks. */
export function reconcileSettingsFrom(config: ReconcilerEnv): ReconcileSettings {
  return {
    ...RECONCILE_DEFAULTS,
    reviewAfterMs: config.REVIEW_AFTER_MINUTES * 60_000,
    gatewayErrorReviewAfterMs: config.GATEWAY_ERROR_REVIEW_MINUTES * 60_000,
    notFoundGraceMs: config.NOT_FOUND_GRACE_MINUTES * 60_000,
    resubmitUnknownNotFound: config.RESUBMIT_UNKNOWN_NOT_FOUND,
    concurrency: config.RECONCILE_CONCURRENCY,
    scheduleEveryMs: config.RECONCILE_EVERY_MINUTES * 60_000,
    watch: watchSettingsFromDays(config.watchDays),
  };
}

/** The settings as logged at start-up, in the units an operator sets them in. */
export function describeReconcileSettings(config: ReconcilerEnv): Record<string, unknown> {
  return {
    resubmitUnknownNotFound: config.RESUBMIT_UNKNOWN_NOT_FOUND,
    reviewAfterMinutes: config.REVIEW_AFTER_MINUTES,
    gatewayErrorReviewMinutes: config.GATEWAY_ERROR_REVIEW_MINUTES,
    notFoundGraceMinutes: config.NOT_FOUND_GRACE_MINUTES,
    concurrency: config.RECONCILE_CONCURRENCY,
    reconcileEveryMinutes: config.RECONCILE_EVERY_MINUTES,
    ...config.watchDays,
  };
}
