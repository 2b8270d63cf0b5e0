import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { literal, looseObject, object, optional, parse, string } from 'valibot';

/**
 * The cold-start floor of the worker's libraries: what the payout worker builds at module load from
 * packages — the tracer (when tracing is on, as shared/observability/tracer.ts decides), the Secrets
 * Manager client (captured), Powertools logger, metrics, parameters and batch, middy with the same
 * three middlewares, valibot — wired the same way, with one message schema and none of payrelay's own
 * code. Its DynamoDB and SQS clients are built at their first send, as the worker's are
 * (shared/adapters/dynamodb-client.ts, sqs-client.ts), so the import loads their code and builds
 * neither.
 * The cold-start part compares it with the DynamoDB-only floor: how much of a function's start its
 * libraries take before payrelay adds anything.
 */
const traced = (process.env.AWS_EXECUTION_ENV ?? '') !== '' && (process.env.POWERTOOLS_TRACE_ENABLED ?? '').trim().toLowerCase() !== 'false';
const tracer: Tracer | undefined = traced
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({ serviceName: 'payrelay-bench', captureHTTPsRequests: false })
  : undefined;
const captured = <C>(client: C): C => (tracer ? tracer.captureAWSv3Client(client) : client);

const messageSchema = object({ version: literal(1), reference: string(), amount: string() });
const secretSchema = looseObject({ key: string(), merchant: optional(string()) });

const logger = new Logger();
const metrics = new Metrics({ namespace: 'payrelay-bench', serviceName: 'payrelay-bench', logger });
let documents: DynamoDBDocumentClient | undefined;
const documentClient = (): DynamoDBDocumentClient =>
  (documents ??= DynamoDBDocumentClient.from(captured(new DynamoDBClient({})), { marshallOptions: { removeUndefinedValues: true } }));
let queues: SQSClient | undefined;
const sqsClient = (): SQSClient => (queues ??= captured(new SQSClient({ useQueueUrlAsEndpoint: false })));
const secrets = new SecretsProvider({ awsSdkV3Client: captured(new SecretsManagerClient({})) });
logger.info('framework-only settings', { traced });

async function lambdaHandler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const receive = async (record: SQSRecord): Promise<void> => {
    const message = parse(messageSchema, JSON.parse(record.body));
    const secret = parse(secretSchema, await secrets.get('payrelay-bench', { transform: 'json' }));
    await documentClient().send(new PutCommand({ TableName: 'payrelay-bench', Item: { pk: message.reference, merchant: secret.merchant } }));
    await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: 'payrelay-bench', Entries: [{ Id: '0', MessageBody: message.reference }] }));
  };
  return processPartialResponse(event, receive, new BatchProcessor(EventType.SQS), { context, throwOnFullBatchFailure: false });
}

export const handler = middy(lambdaHandler)
  .use(tracer ? [captureLambdaHandler(tracer, { captureResponse: false })] : [])
  .use(injectLambdaContext(logger))
  .use(logMetrics(metrics));
