import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * The cold-start floor: a Lambda handler that imports only the DynamoDB client and builds it at
 * module scope, bundled by the same PayrelayFunction construct as the real functions.
 */
const client = new DynamoDBClient({});

export const handler = async (): Promise<{ region: string }> => ({ region: await client.config.region() });
