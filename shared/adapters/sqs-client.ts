import { SQSClient } from '@aws-sdk/client-sqs';
import { captured } from '@shared/observability/tracer';

/*
 * The SQS client of this execution environment, created once at module load and captured by the
 * tracer. Its own module, so only the bundles that send to or change a queue load it. The local
 * endpoint comes from AWS_ENDPOINT_URL_SQS.
 */

// fauxqs answers with queue URLs on its own host; use the configured endpoint, never the queue URL's host.
export const sqsClient = captured(new SQSClient({ useQueueUrlAsEndpoint: false }));

let checkSender: SQSClient | undefined;

/**
 * The client of the checks queue's sends: the worker sends each batch's first delayed checks beside
 * its Payout requests, so this call runs while the last Payout requests of the batch are still
 * leaving. Like `payoutItemWriter()` (dynamodb-client.ts), it resolves a command's middleware stack
 * once per command class instead of on every call (`cacheMiddleware`) and leaves out the SDK's
 * logger middleware, which walks every input and output for a logger this client never has.
 * Measured in docs/performance.md (point 3, 2026-11-24 12:45 UTC): a SendMessageBatch of 10 checks
 * hands its request on after 0.01 to 0.03 ms of the caller's CPU instead of 0.15 to 0.20 ms, and
 * costs about a quarter less CPU in all. Built on first use, so no cold start pays for it; whoever
 * instruments it (a test, the bench) does so before its first send.
 */
export function payoutCheckSender(): SQSClient {
  if (!checkSender) {
    checkSender = captured(new SQSClient({ useQueueUrlAsEndpoint: false, cacheMiddleware: true }));
    checkSender.middlewareStack.remove('loggerMiddleware');
  }
  return checkSender;
}
