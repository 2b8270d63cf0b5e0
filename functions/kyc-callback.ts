import { createEventStore } from '@shared/adapters/event-store';
import { cachedSecret, kycSecretSchema } from '@shared/adapters/secrets';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { receiveKycCallback } from '@shared/app/receive-kyc-callback';
import { refreshable } from '@shared/adapters/refreshable-secret';
import { loadConfig, requiredString } from '@shared/config/env';
import { webhookEnvSchemaWith } from '@shared/config/webhook';
import { webhookHandler } from '@shared/http/webhook';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';

const config = loadConfig(
  webhookEnvSchemaWith({
    EVENTS_TABLE_NAME: requiredString,
    KYC_SECRET_ID: requiredString,
  }),
);

const deps = {
  events: createEventStore({ tableName: config.EVENTS_TABLE_NAME }),
  secret: refreshable(cachedSecret(config.KYC_SECRET_ID, kycSecretSchema), systemClock),
  retentionDays: config.EVENT_RETENTION_DAYS,
  clock: systemClock,
  log: logger,
  telemetry: telemetryFrom(metrics),
};

/** POST /callbacks/kyc/{token}: a KYC status callback, authenticated by the token in its path, stored and acknowledged (the callback applier applies it). */
export const handler = webhookHandler(config, (event, webhook) =>
  receiveKycCallback(deps, { token: event.pathParameters?.token ?? '', ...webhook }),
);
