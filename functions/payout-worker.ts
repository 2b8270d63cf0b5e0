import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { accountFingerprintsFromSecret } from '@shared/adapters/account-fingerprint';
import { createDeadLetterSink } from '@shared/adapters/dead-letter';
import { createPayoutCheckQueue } from '@shared/adapters/payout-check-queue';
import { kycGatingAdapters } from '@shared/adapters/kyc-gating';
import { payoutProviderFrom } from '@shared/adapters/payout-provider';
import { createMessageRedelivery, payoutMessageFromSqs } from '@shared/adapters/payout-queue';
import { createPayoutItemStore } from '@shared/adapters/payout-item-store';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { createKycApprovalReader } from '@shared/app/kyc-approval';
import { createPayoutMessageHandler } from '@shared/app/payout-messages';
import { createProcessPayout, createRejectInvalidRequest } from '@shared/app/process-payout';
import { loadConfig } from '@shared/config/env';
import { workerEnvSchema } from '@shared/config/worker';
import { logger } from '@shared/observability/logger';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { metrics } from '@shared/observability/metrics';
import { describeDefiniteRefusals } from '@shared/domain/definite-refusals';

/* The payout worker: SQS batches of payout requests, partial batch failures (ReportBatchItemFailures). */
const config = loadConfig(workerEnvSchema);
const payoutService = payoutProviderFrom(config);
const repository = createPayoutItemStore(config.PAYOUTS_TABLE_NAME);
const common = { clock: systemClock, telemetry: telemetryFrom(metrics), log: logger };
const settings = { nameMatchThreshold: config.NAME_MATCH_THRESHOLD, kycGating: config.KYC_GATING !== undefined, definiteRefusals: config.PAYOUT_DEFINITE_REFUSALS };
const queue = { maxReceiveCount: config.PAYOUTS_MAX_RECEIVE_COUNT, concurrency: config.WORKER_CONCURRENCY };
const startBatch = createPayoutMessageHandler({
  ...common,
  processPayout: createProcessPayout({
    ...common,
    repository,
    provider: payoutService.provider,
    credentials: payoutService.credentials,
    fingerprints: accountFingerprintsFromSecret(config.ACCOUNT_KEY_SECRET_ID),
    // Left out of a bundle built without the gate (shared/config/build-flags.ts).
    kyc: process.env.PAYRELAY_KYC_GATE_BUILD !== 'off' && config.KYC_GATING ? createKycApprovalReader({ ...common, ...kycGatingAdapters(config.KYC_GATING, config.PROVIDER_TIMEOUT_MS) }) : undefined,
    checks: createPayoutCheckQueue(config.PAYOUT_CHECKS_QUEUE_URL),
    settings,
  }),
  rejectInvalid: createRejectInvalidRequest({ ...common, repository }),
  deadLetters: createDeadLetterSink(config.PAYOUTS_DLQ_URL),
  redelivery: createMessageRedelivery(config.PAYOUTS_QUEUE_URL),
  ...queue,
});
logger.info('payout worker settings', { ...payoutService.settings, ...settings, definiteRefusals: describeDefiniteRefusals(settings.definiteRefusals), ...queue });

async function lambdaHandler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const batch = startBatch();
  const receive = (record: SQSRecord) => batch.handle(payoutMessageFromSqs(record));
  // A processor per invocation: it holds the batch's state, and the local runner may invoke concurrently.
  const response = await processPartialResponse(event, receive, new BatchProcessor(EventType.SQS), { context, throwOnFullBatchFailure: false });
  batch.end();
  return response;
}

/** SQS event source handler (ReportBatchItemFailures). */
export const handler = lambdaChain(lambdaHandler);
