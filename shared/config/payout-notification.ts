import { envInt, envNonNegativeInt, requiredString } from './env';
import { signingProfileSetting } from './provider';
import { webhookEnvSchemaWith } from './webhook';

/**
 * The payout-notification receiver's settings (docs/webhooks.md, "Settings"): its tables and secret,
 * the signing profile notifications are verified with, the quarantine, and the key-rotation window.
 */
export const payoutNotificationEnvSchema = webhookEnvSchemaWith({
  EVENTS_TABLE_NAME: requiredString,
  PAYOUTS_TABLE_NAME: requiredString,
  PROVIDER_SECRET_ID: requiredString,
  SIGNING_PROFILE: signingProfileSetting,
  QUARANTINE_TABLE_NAME: requiredString,
  QUARANTINE_MAX_PER_HOUR: envInt(100),
  QUARANTINE_RETENTION_DAYS: envInt(14),
  MISMATCH_NUDGE_MINUTES: envInt(15),
  /** After a put of the provider secret, the previous keys still verify notifications this long; 0 turns that off. */
  KEY_ROTATION_WINDOW_HOURS: envNonNegativeInt(24),
});
