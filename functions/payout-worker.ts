import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { createDeadLetterSink } from '@shared/adapters/dead-letter';
import { createMessageRedelivery } from '@shared/adapters/payout-queue';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { cachedSecret, kycSecretSchema, providerSecretSchema } from '@shared/adapters/secrets';
import { createKycApprovalReader } from '@shared/app/kyc-approval';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { kycVerifier } from '@shared/adapters/kyc-verifier';
import { RetryLaterError, createProcessPayout, createRejectInvalidRequest } from '@shared/app/process-payout';
import { createKeyedLimiter } from '@shared/app/keyed-limiter';
import { credentialsFromCachedSecret } from '@shared/adapters/credentials';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import type { KycApproval } from '@shared/ports/payouts';
import { REDRIVE_RUN_ATTRIBUTE } from '@shared/messages/redrive';
import { envBoolean, envInt, loadConfig, requiredString } from '@shared/config/env';
import { PAYOUTS_QUEUE } from '@shared/config/resources';
import { payoutKey } from '@shared/domain/identity';
import { DEFAULT_NAME_MATCH_THRESHOLD } from '@shared/domain/name-policy';
import { InvalidPayoutRequestError, parsePayoutRequest } from '@shared/messages/payout-request';
import { logger } from '@shared/observability/logger';
import { METRIC } from '@shared/observability/metric-names';
import { metrics } from '@shared/observability/metrics';
import { KycServiceClient } from '@shared/providers/kyc-client';
import { PayoutServiceClient } from '@shared/providers/payout-client';
import { describeDefiniteRefusals, parseDefiniteRefusals } from '@shared/domain/definite-refusals';
import { resolveSigningProfile } from '@shared/signing';

/*
 * The payout worker: SQS batches of payout requests, partial batch failures. Each record runs the
 * process-payout use case; records of one payout identity never run at once.
 */

const config = loadConfig(
  z.object({
    PAYOUTS_TABLE_NAME: requiredString,
    PAYOUTS_DLQ_URL: requiredString,
    /** The queue this worker consumes: a provider's Retry-After delays a message's next delivery on it. */
    PAYOUTS_QUEUE_URL: requiredString,
    PROVIDER_SECRET_ID: requiredString,
    PAYOUT_API_BASE_URL: requiredString,
    SIGNING_PROFILE: z.string().optional(),
    BEARER_PREFIX: envBoolean(true),
    PROVIDER_TIMEOUT_MS: envInt(10_000),
    NAME_MATCH_THRESHOLD: z.coerce.number().min(0).max(1).optional().transform((v) => v ?? DEFAULT_NAME_MATCH_THRESHOLD),
    KYC_GATING: envBoolean(false),
    /** Payout refusals known to be final (JSON list of {status, message}); empty: every refusal is settled through GetPayout. */
    PAYOUT_DEFINITE_REFUSALS: z.string().optional(),
    KYC_TABLE_NAME: z.string().optional(),
    KYC_SECRET_ID: z.string().optional(),
    KYC_API_BASE_URL: z.string().optional(),
    /** The payouts queue's maxReceiveCount: on the last receive a failing record goes to the DLQ with its reason. */
    PAYOUTS_MAX_RECEIVE_COUNT: envInt(PAYOUTS_QUEUE.defaultMaxReceiveCount),
    /** Records of a batch processed at once (records of one identity always run one after another). */
    WORKER_CONCURRENCY: envInt(4),
  }),
);

const signingProfile = resolveSigningProfile(config.SIGNING_PROFILE);
const definiteRefusals = parseDefiniteRefusals(config.PAYOUT_DEFINITE_REFUSALS);
const repository = createPayoutRepository(config.PAYOUTS_TABLE_NAME);
const telemetry = telemetryFrom(metrics);
const deadLetters = createDeadLetterSink(config.PAYOUTS_DLQ_URL);
const redelivery = createMessageRedelivery(config.PAYOUTS_QUEUE_URL);

function kycGate(): KycApproval | undefined {
  if (!config.KYC_GATING) return undefined;
  const { KYC_TABLE_NAME: table, KYC_SECRET_ID: secretId, KYC_API_BASE_URL: baseUrl } = config;
  if (!table || !secretId || !baseUrl) {
    throw new Error('KYC_GATING=on needs KYC_TABLE_NAME, KYC_SECRET_ID and KYC_API_BASE_URL');
  }
  const kycSecret = cachedSecret(secretId, kycSecretSchema);
  const client = new KycServiceClient({ baseUrl, timeoutMs: config.PROVIDER_TIMEOUT_MS });
  return createKycApprovalReader({
    subjects: createKycRepository({ tableName: table }),
    verifier: kycVerifier(client),
    appId: async () => (await kycSecret.get()).app_id,
    clock: systemClock,
    log: logger,
  });
}

const processPayout = createProcessPayout({
  repository,
  provider: new PayoutServiceClient({
    baseUrl: config.PAYOUT_API_BASE_URL,
    signingProfile,
    bearerPrefix: config.BEARER_PREFIX,
    timeoutMs: config.PROVIDER_TIMEOUT_MS,
  }),
  credentials: credentialsFromCachedSecret(cachedSecret(config.PROVIDER_SECRET_ID, providerSecretSchema)),
  kyc: kycGate(),
  clock: systemClock,
  telemetry,
  log: logger,
  settings: { nameMatchThreshold: config.NAME_MATCH_THRESHOLD, kycGating: config.KYC_GATING, definiteRefusals },
});
const rejectInvalid = createRejectInvalidRequest({ repository, clock: systemClock, telemetry, log: logger });

logger.info('payout worker settings', {
  signingProfile: signingProfile.name,
  bearerPrefix: config.BEARER_PREFIX,
  providerTimeoutMs: config.PROVIDER_TIMEOUT_MS,
  nameMatchThreshold: config.NAME_MATCH_THRESHOLD,
  kycGating: config.KYC_GATING,
  definiteRefusals: describeDefiniteRefusals(definiteRefusals),
  maxReceiveCount: config.PAYOUTS_MAX_RECEIVE_COUNT,
  concurrency: config.WORKER_CONCURRENCY,
});

async function deadLetter(record: SQSRecord, reason: string): Promise<void> {
  // A redriven message keeps its redrive run's marker, so that run counts it as failed again instead of moving it again.
  const run = record.messageAttributes?.[REDRIVE_RUN_ATTRIBUTE]?.stringValue;
  await deadLetters.send(record.body, reason, { sourceMessageId: record.messageId, ...(run ? { [REDRIVE_RUN_ATTRIBUTE]: run } : {}) });
  telemetry.count(METRIC.dlqSend);
  logger.warn('payout request sent to the DLQ', { messageId: record.messageId, reason });
}

/**
 * The provider asked to wait (Retry-After): the message comes back no earlier. If the queue refuses,
 * the message still comes back, after the queue's visibility time-out.
 */
async function delayRedelivery(record: SQSRecord, retryAfterMs: number, keys: Record<string, string>): Promise<void> {
  try {
    await redelivery.delay(record.receiptHandle, retryAfterMs);
  } catch (error) {
    logger.warn('could not delay the retry as the provider asked; it comes back after the visibility time-out', {
      ...keys,
      retryAfterMs,
      error: (error as Error).name,
    });
  }
}

/** A message that is not a valid payout request: REJECTED if it names a new identity, else DLQ. Never retried. */
async function handleInvalid(record: SQSRecord, error: InvalidPayoutRequestError): Promise<void> {
  if (error.identity && (await rejectInvalid(error.identity, error.message))) return;
  await deadLetter(record, error.message);
}

async function lambdaHandler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const limiter = createKeyedLimiter(config.WORKER_CONCURRENCY);
  const recordHandler = async (record: SQSRecord): Promise<void> => {
    let request;
    try {
      request = parsePayoutRequest(record.body);
    } catch (error) {
      if (error instanceof InvalidPayoutRequestError) return handleInvalid(record, error);
      throw error;
    }
    const key = payoutKey(request);
    const keys = { payoutKey: key, withdrawalReference: request.withdrawal_reference, messageId: record.messageId };
    try {
      const result = await limiter.run(key, () => processPayout(request));
      logger.info('payout request processed', { ...keys, outcome: result.outcome, state: result.state, reason: result.reason });
      if (result.outcome === 'conflict') await deadLetter(record, `conflicts with the stored payout: ${result.reason ?? ''}`);
    } catch (error) {
      const reason = error instanceof RetryLaterError ? error.message : `${(error as Error).name}: processing failed`;
      const receives = Number(record.attributes.ApproximateReceiveCount ?? '1');
      if (receives >= config.PAYOUTS_MAX_RECEIVE_COUNT) {
        // The last receive SQS allows: hand it to the DLQ ourselves so the reason travels with it.
        await deadLetter(record, `gave up after ${receives} receives: ${reason}`);
        return;
      }
      const retryAfterMs = error instanceof RetryLaterError ? error.retryAfterMs : undefined;
      if (retryAfterMs !== undefined) await delayRedelivery(record, retryAfterMs, keys);
      logger.warn('payout request will be retried', { ...keys, receives, reason, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
      throw error;
    }
  };
  // A processor per invocation: it holds the batch's state, and the local runner may invoke concurrently.
  const processor = new BatchProcessor(EventType.SQS);
  const response = await processPartialResponse(event, recordHandler, processor, { context, throwOnFullBatchFailure: false });
  if (event.Records.length > 0 && response.batchItemFailures.length === event.Records.length) telemetry.count(METRIC.workerBatchFailed);
  return response;
}

/** SQS event source handler (ReportBatchItemFailures). */
export const handler = middy(lambdaHandler).use(injectLambdaContext(logger)).use(logMetrics(metrics));
