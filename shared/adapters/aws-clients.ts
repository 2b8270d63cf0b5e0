import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';

/*
 * Module-scope SDK clients, created once per execution environment. Local endpoints come from the
 * SDK's own AWS_ENDPOINT_URL_<SERVICE> variables, so production code has no local branch.
 */

export const dynamoClient = new DynamoDBClient({});

/** Document client: plain JS values in and out; `undefined` attributes are dropped, never stored. */
export const documentClient = DynamoDBDocumentClient.from(dynamoClient, {
  marshallOptions: { removeUndefinedValues: true },
});

// fauxqs answers with queue URLs on its own host; use the configured endpoint, never the queue URL's host.
export const sqsClient = new SQSClient({ useQueueUrlAsEndpoint: false });

export const secretsClient = new SecretsManagerClient({});
