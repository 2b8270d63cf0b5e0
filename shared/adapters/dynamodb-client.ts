import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { captured } from '@shared/observability/tracer';

/*
 * The DynamoDB client of this execution environment, created once at module load and captured by
 * the tracer (each call a subsegment when tracing is on). Its own module, so a bundle that never
 * touches DynamoDB never loads its client. The local endpoint comes from the SDK's own
 * AWS_ENDPOINT_URL_DYNAMODB, so production code has no local branch.
 */

export const dynamoClient = captured(new DynamoDBClient({}));

/** Document client: plain JS values in and out; `undefined` attributes are dropped, never stored. */
export const documentClient = DynamoDBDocumentClient.from(dynamoClient, {
  marshallOptions: { removeUndefinedValues: true },
});

let itemWriter: DynamoDBClient | undefined;

/**
 * The client of the payout item writes (every version of a payout: the worker's create and outcome,
 * each later transition), which sit on the worker's path after each provider answer. Without
 * `cacheMiddleware` the SDK resolves a command's middleware stack (about 30 steps, sorted and
 * wired together) on every call; with it, once per command class. The document client refuses that
 * option (its commands add their marshalling step per call), so this is a low-level client of its
 * own and the repository marshalls the item itself. It also leaves out the SDK's logger middleware,
 * which walks every input and output for a logger this client never has. Measured in
 * docs/performance.md (point 3, 2026-11-24 09:00 UTC): 0.35 instead of 0.45 ms of the caller's CPU
 * per conditional PutItem. Built on first use: a cold start pays nothing for it, and a function
 * that never writes a payout never builds it. Middleware added to it after its first PutItem is
 * not seen by that cached stack, so whoever instruments it (tests, the bench) does so first.
 */
export function payoutItemWriter(): DynamoDBClient {
  if (!itemWriter) {
    itemWriter = captured(new DynamoDBClient({ cacheMiddleware: true }));
    itemWriter.middlewareStack.remove('loggerMiddleware');
  }
  return itemWriter;
}
