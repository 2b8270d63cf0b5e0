import * as v from '@shared/validation/valibot';
import { envInt, requiredString } from './env';
import { webhookEnvSchema } from './webhook';

/**
 * How far back (by the callback's own timestamp) the scheduled catch-up looks when the stage does not
 * say. Two days covers a daily schedule with a missed run; it must stay well inside the events'
 * retention, or a callback whose stored copy has expired would be "recovered" a second time.
 */
export const DEFAULT_KYC_CATCH_UP_LOOKBACK_HOURS = 48;

/** The scheduled KYC catch-up's settings (docs/architecture.md, "Environment variables"). */
export const kycCatchUpEnvSchema = v.object({
  EVENTS_TABLE_NAME: requiredString,
  KYC_TABLE_NAME: requiredString,
  KYC_SECRET_ID: requiredString,
  KYC_API_BASE_URL: requiredString,
  EVENT_RETENTION_DAYS: webhookEnvSchema.entries.EVENT_RETENTION_DAYS,
  PROVIDER_TIMEOUT_MS: envInt(10_000),
  KYC_CATCH_UP_LOOKBACK_HOURS: envInt(DEFAULT_KYC_CATCH_UP_LOOKBACK_HOURS),
});
