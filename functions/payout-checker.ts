import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { reconcilerWiringFrom } from '@shared/adapters/reconciler-wiring';
import { createReconciler } from '@shared/app/reconcile-payouts';
import { loadConfig } from '@shared/config/env';
import { reconcilerEnvSchema } from '@shared/config/reconciler';
import { InvalidPayoutCheckError, parsePayoutCheck } from '@shared/messages/payout-check';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { logger } from '@shared/observability/logger';

/*
 * The payout checker: delayed checks from the checks queue, seconds after a payout is due (10 s, 20 s,
 * 40 s ... after its payout intent). Each record is one look at one payout by the reconciler's own
 * use case, which schedules the next. A failing record is delivered again, then lands in the checks
 * DLQ; either way the scheduled reconciler still finds the payout in the open index.
 */

const config = loadConfig(reconcilerEnvSchema);
const wiring = reconcilerWiringFrom(config);
const reconciler = createReconciler(wiring.deps);
logger.info('payout checker settings', wiring.startupSettings);

async function checkRecord(record: SQSRecord): Promise<void> {
  let message;
  try {
    message = parsePayoutCheck(record.body);
  } catch (error) {
    if (!(error instanceof InvalidPayoutCheckError)) throw error;
    // Nothing to retry and nothing lost: the sweep covers every open payout.
    logger.warn('check message dropped', { messageId: record.messageId, reason: error.message });
    return;
  }
  const result = await reconciler.check(message);
  logger.info('payout check', { withdrawalReference: message.withdrawal_reference, messageId: record.messageId, ...result });
}

async function lambdaHandler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  return processPartialResponse(event, checkRecord, new BatchProcessor(EventType.SQS), { context, throwOnFullBatchFailure: false });
}

/** SQS event source handler of the checks queue (ReportBatchItemFailures). */
export const handler = lambdaChain(lambdaHandler);
