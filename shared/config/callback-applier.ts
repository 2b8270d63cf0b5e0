import * as v from '@shared/validation/valibot';
import { envInt, envNonNegativeInt, requiredString } from './env';

/** Sweep grace when APPLY_SWEEP_GRACE_SECONDS is unset: the stream applies an event well within it. */
export const DEFAULT_APPLY_SWEEP_GRACE_SECONDS = 60;

/**
 * The callback applier's settings (docs/architecture.md, "Environment variables"): the tables a
 * stored callback is applied to, and the sweep's timing.
 */
export const callbackApplierEnvSchema = v.object({
  EVENTS_TABLE_NAME: requiredString,
  KYC_TABLE_NAME: requiredString,
  PAYOUTS_TABLE_NAME: requiredString,
  COLLECTIONS_TABLE_NAME: requiredString,
  /** The sweep leaves events younger than this to the stream; the local stack sets 0 (no stream there). */
  APPLY_SWEEP_GRACE_SECONDS: envNonNegativeInt(DEFAULT_APPLY_SWEEP_GRACE_SECONDS),
  /** An event the sweep finds unapplied after this long counts as late (CallbacksAppliedLate, alarmed). */
  APPLY_LATE_AFTER_MINUTES: envInt(5),
});
