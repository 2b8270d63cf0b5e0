import { performance } from 'node:perf_hooks';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { FUNCTIONS } from '@shared/config/functions';
import type { PayoutRequestInput } from '@shared/messages/payout-request';
import { payoutRequestEvent } from '@test/factories/sqs-events';
import { contextFor } from './local-env';

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * Invokes the worker handler with the requests as consecutive SQS batches of `batchSize`, one after
 * another as one Lambda instance would, and returns each invocation's duration (ms). Any batch item
 * failure is an error: the benchmark needs every payout to go through.
 */
export async function runWorkerBatches(handler: SqsHandler, requests: readonly PayoutRequestInput[], batchSize: number): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < requests.length; i += batchSize) {
    const event = payoutRequestEvent(requests.slice(i, i + batchSize));
    const started = performance.now();
    const response = await handler(event, contextFor(FUNCTIONS.payoutWorker));
    durations.push(performance.now() - started);
    if (response.batchItemFailures.length > 0) {
      throw new Error(`the worker reported ${response.batchItemFailures.length} failed records; the benchmark needs every payout to go through`);
    }
  }
  return durations;
}
