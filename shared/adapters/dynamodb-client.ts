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
