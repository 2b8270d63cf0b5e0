import { SQSClient } from '@aws-sdk/client-sqs';
import { captured } from '@shared/observability/tracer';

/*
 * The SQS clients of this execution environment, each built once, on first use, and captured by the
 * tracer. Their own module, so only the bundles that send to or change a queue load it. The local
 * endpoint comes from AWS_ENDPOINT_URL_SQS; fauxqs answers with queue URLs on its own host, so the
 * clients use the configured endpoint, never the queue URL's host.
 */

let shared: SQSClient | undefined;

/**
 * The SQS client of the queue calls off the functions' normal path: the worker's dead letters and
 * redeliveries (a refused or failing record), and the operator's queue and DLQ actions. Built on
 * first use, since no function sends through it on a normal start: the worker's first payout, the
 * reconciler and the checker (which bundle this module for `payoutCheckSender`) never do, and
 * building and capturing it at import was about 1 ms of their cold start (docs/performance.md,
 * point 2). The first dead letter or redelivery of an execution environment pays for it instead.
 */
export function sqsClient(): SQSClient {
  shared ??= captured(new SQSClient({ useQueueUrlAsEndpoint: false }));
  return shared;
}

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
