import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

/** SQS payout worker. Placeholder entry point so infra can synthesize; replaced by the real worker. */
export const handler = async (_event: SQSEvent): Promise<SQSBatchResponse> => ({ batchItemFailures: [] });
