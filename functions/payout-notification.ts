import { createEventStore } from '@shared/adapters/event-store';
import { createPayoutNudge } from '@shared/adapters/payout-nudge';
import { createQuarantineStore } from '@shared/adapters/quarantine-store';
import { cachedSecret, previousSecret, providerSecretSchema } from '@shared/adapters/secrets';
import { credentialsFromCachedSecret, previousCredentialsFrom } from '@shared/adapters/credentials';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { receivePayoutNotification } from '@shared/app/receive-payout-notification';
import { refreshable } from '@shared/adapters/refreshable-secret';
import { loadConfig } from '@shared/config/env';
import { payoutNotificationEnvSchema } from '@shared/config/payout-notification';
import { requestHeader, webhookHandler } from '@shared/http/webhook';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';

const config = loadConfig(payoutNotificationEnvSchema);

const signingProfile = config.SIGNING_PROFILE;
logger.info('order notifications verified with signing profile', { signingProfile: signingProfile.name });

const deps = {
  events: createEventStore({ tableName: config.EVENTS_TABLE_NAME }),
  payouts: createPayoutNudge(config.PAYOUTS_TABLE_NAME),
  credentials: refreshable(credentialsFromCachedSecret(cachedSecret(config.PROVIDER_SECRET_ID, providerSecretSchema)), systemClock),
  previousCredentials: previousCredentialsFrom(previousSecret(config.PROVIDER_SECRET_ID, providerSecretSchema)),
  rotationWindowMs: config.KEY_ROTATION_WINDOW_HOURS * 3_600_000,
  signingProfile,
  quarantine: createQuarantineStore({ tableName: config.QUARANTINE_TABLE_NAME }),
  quarantineSettings: {
    maxPerHour: config.QUARANTINE_MAX_PER_HOUR,
    retentionDays: config.QUARANTINE_RETENTION_DAYS,
    nudgeEveryMinutes: config.MISMATCH_NUDGE_MINUTES,
  },
  retentionDays: config.EVENT_RETENTION_DAYS,
  clock: systemClock,
  log: logger,
  telemetry: telemetryFrom(metrics),
};

/** POST /callbacks/payout-notifications: a signed order notification from the payout service, stored and acknowledged (the callback applier applies it). */
export const handler = webhookHandler(config, (event, webhook) =>
  receivePayoutNotification(deps, { authorization: requestHeader(event, 'authorization'), ...webhook }),
);
