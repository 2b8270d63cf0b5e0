import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { captured } from '@shared/observability/tracer';

/*
 * The DynamoDB clients of this execution environment, each built once, on first use, and captured
 * by the tracer (each call a subsegment when tracing is on). Their own module, so a bundle that never
 * touches DynamoDB never loads them. The local endpoint comes from the SDK's own
 * AWS_ENDPOINT_URL_DYNAMODB, so production code has no local branch.
 */

let shared: DynamoDBClient | undefined;
let documents: DynamoDBDocumentClient | undefined;

/**
 * The low-level client under `documentClient()`: whoever instruments the document client's calls
 * (tests, the bench) attaches to it. Built on first use, like the document client over it.
 */
export function dynamoClient(): DynamoDBClient {
  shared ??= captured(new DynamoDBClient({}));
  return shared;
}

/**
 * The document client: plain JS values in and out; `undefined` attributes are dropped, never stored.
 * Built on first use: the adapters that read through it take it when they are made, except the
 * payout item store, which takes it at its first read, since the worker reads a payout by its
 * identity only off its normal path (a redelivered or conflicting request); a worker's cold start
 * then builds no client it does not send through (docs/performance.md, point 2).
 */
export function documentClient(): DynamoDBDocumentClient {
  documents ??= DynamoDBDocumentClient.from(dynamoClient(), { marshallOptions: { removeUndefinedValues: true } });
  return documents;
}

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
