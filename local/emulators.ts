import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DynamoDBClient,
  type AttributeDefinition,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  type Projection,
} from '@aws-sdk/client-dynamodb';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import dynalite from 'dynalite';
import { buildApp } from 'fauxqs';
import {
  COLLECTIONS_TABLE,
  EVENTS_TABLE,
  KYC_SECRET,
  ACCOUNT_KEY_SECRET,
  KYC_TABLE,
  CHECKS_QUEUE,
  PAYOUTS_QUEUE,
  PAYOUTS_TABLE,
  PROVIDER_SECRET,
  QUARANTINE_TABLE,
  SECRETS,
  TABLES,
  resourceName,
  type IndexDefinition,
  type KeyDefinition,
  type QueueDefinition,
  type TableDefinition,
} from '@shared/config/resources';
import { startSecretsStandIn } from './secrets-stand-in';

/**
 * Local AWS for the local stack, tests and benchmarks: dynalite (DynamoDB), fauxqs (SQS) and the
 * local-only Secrets Manager stand-in, all on 127.0.0.1. Resources are created from
 * @shared/config/resources, the same definitions the CDK stateful stack uses.
 */

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export interface RunningEmulator {
  readonly endpoint: string;
  stop(): Promise<void>;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });
}

/** dynalite, in memory. `createTableMs: 0` or the first write after CreateTable fails. */
export async function startDynalite(port = 0): Promise<RunningEmulator> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${address.port}`, stop: () => closeServer(server) };
}

/** fauxqs, bound to loopback (its own start function listens on 0.0.0.0). */
export async function startFauxqs(port = 0): Promise<RunningEmulator> {
  const app = buildApp({ logger: false });
  const address = await app.listen({ port, host: '127.0.0.1' });
  return { endpoint: address, stop: () => app.close() };
}

export { startSecretsStandIn } from './secrets-stand-in';

export interface LocalAwsOptions {
  /** Stage in resource names (`payrelay-<stage>-<id>`). */
  stage?: string;
  region?: string;
  /** Fixed ports for the local stack; tests leave them at 0 (free ports). */
  ports?: { dynamodb?: number; sqs?: number; secretsManager?: number };
  /** Visibility time-out of the payouts queue. Short locally, so redelivery is visible in seconds. */
  visibilityTimeoutSeconds?: number;
  maxReceiveCount?: number;
  /** Initial secret values; a secret without a value exists but cannot be read until `secrets put`. */
  secrets?: { provider?: Record<string, string>; kyc?: Record<string, string> };
}

export interface LocalAws {
  /** Everything a handler, the CLI or a test needs in process.env to use these emulators. */
  readonly env: Record<string, string>;
  readonly endpoints: { dynamodb: string; sqs: string; secretsManager: string };
  readonly names: { payoutsTable: string; eventsTable: string; kycTable: string; quarantineTable: string; collectionsTable: string; providerSecret: string; kycSecret: string };
  readonly queueUrls: { payouts: string; deadLetter: string; checks: string };
  stop(): Promise<void>;
}

function attributeDefinitions(table: TableDefinition): AttributeDefinition[] {
  const keys: KeyDefinition[] = [table.partitionKey];
  if (table.sortKey) keys.push(table.sortKey);
  for (const index of table.indexes) {
    keys.push(index.partitionKey);
    if (index.sortKey) keys.push(index.sortKey);
  }
  const unique = new Map(keys.map((k) => [k.name, k.type]));
  return [...unique].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
}

function keySchema(partitionKey: KeyDefinition, sortKey?: KeyDefinition): KeySchemaElement[] {
  const schema: KeySchemaElement[] = [{ AttributeName: partitionKey.name, KeyType: 'HASH' }];
  if (sortKey) schema.push({ AttributeName: sortKey.name, KeyType: 'RANGE' });
  return schema;
}

function projection(index: IndexDefinition): Projection {
  if (index.projection === 'ALL' || index.projection === 'KEYS_ONLY') return { ProjectionType: index.projection };
  return { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.projection] };
}

/** Creates a table from its shared definition (on-demand, like the deployed one). */
export async function createTable(client: DynamoDBClient, table: TableDefinition, tableName: string): Promise<void> {
  const indexes: GlobalSecondaryIndex[] = table.indexes.map((index) => ({
    IndexName: index.indexName,
    KeySchema: keySchema(index.partitionKey, index.sortKey),
    Projection: projection(index),
  }));
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: attributeDefinitions(table),
      KeySchema: keySchema(table.partitionKey, table.sortKey),
      GlobalSecondaryIndexes: indexes.length > 0 ? indexes : undefined,
    }),
  );
}

/**
 * Creates a queue's dead-letter queue, then the queue with its redrive policy to it (as the CDK
 * stateful stack does), and returns both URLs.
 */
async function createQueueWithDeadLetters(
  client: SQSClient,
  stage: string,
  queue: QueueDefinition,
  options: { visibilityTimeoutSeconds: number; maxReceiveCount: number },
): Promise<{ url: string; deadLetterUrl: string }> {
  const deadLetter = await client.send(new CreateQueueCommand({ QueueName: resourceName(stage, queue.deadLetterQueue.id) }));
  const deadLetterUrl = deadLetter.QueueUrl as string;
  const deadLetterAttributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: deadLetterUrl, AttributeNames: ['QueueArn'] }));
  const created = await client.send(
    new CreateQueueCommand({
      QueueName: resourceName(stage, queue.id),
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(queue.retentionSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterAttributes.Attributes?.QueueArn, maxReceiveCount: options.maxReceiveCount }),
      },
    }),
  );
  return { url: created.QueueUrl as string, deadLetterUrl };
}

/**
 * Starts dynalite, fauxqs and the secrets stand-in, then creates the tables, the payouts queue with
 * its DLQ and redrive policy, and the two secrets. Returns the env that points the SDK at them.
 */
export async function startLocalAws(options: LocalAwsOptions = {}): Promise<LocalAws> {
  const stage = options.stage ?? 'local';
  const region = options.region ?? 'eu-west-1';
  const started: RunningEmulator[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.splice(0).map((e) => e.stop()));
  };

  try {
    const dynamo = await startDynalite(options.ports?.dynamodb);
    started.push(dynamo);
    const sqs = await startFauxqs(options.ports?.sqs);
    started.push(sqs);
    const secrets = await startSecretsStandIn({ port: options.ports?.secretsManager, region });
    started.push(secrets);

    const clientConfig = { region, credentials: LOCAL_CREDENTIALS };
    const dynamoClient = new DynamoDBClient({ ...clientConfig, endpoint: dynamo.endpoint });
    const sqsClient = new SQSClient({ ...clientConfig, endpoint: sqs.endpoint, useQueueUrlAsEndpoint: false });
    const secretsClient = new SecretsManagerClient({ ...clientConfig, endpoint: secrets.endpoint });

    const names = {
      payoutsTable: resourceName(stage, PAYOUTS_TABLE.id),
      eventsTable: resourceName(stage, EVENTS_TABLE.id),
      kycTable: resourceName(stage, KYC_TABLE.id),
      quarantineTable: resourceName(stage, QUARANTINE_TABLE.id),
      collectionsTable: resourceName(stage, COLLECTIONS_TABLE.id),
      providerSecret: resourceName(stage, PROVIDER_SECRET.id),
      kycSecret: resourceName(stage, KYC_SECRET.id),
    };
    for (const table of TABLES) await createTable(dynamoClient, table, resourceName(stage, table.id));

    const visibilityTimeoutSeconds = options.visibilityTimeoutSeconds ?? 30;
    const payouts = await createQueueWithDeadLetters(sqsClient, stage, PAYOUTS_QUEUE, {
      visibilityTimeoutSeconds,
      maxReceiveCount: options.maxReceiveCount ?? PAYOUTS_QUEUE.defaultMaxReceiveCount,
    });
    const checks = await createQueueWithDeadLetters(sqsClient, stage, CHECKS_QUEUE, { visibilityTimeoutSeconds, maxReceiveCount: CHECKS_QUEUE.defaultMaxReceiveCount });

    // The account key is generated, as the deploy's Secrets Manager generator does; the emulators keep
    // no state across starts, so neither do the fingerprints it makes.
    const accountKey = { key: randomBytes(48).toString('base64url') };
    for (const [name, value] of [
      [names.providerSecret, options.secrets?.provider],
      [names.kycSecret, options.secrets?.kyc],
      [resourceName(stage, ACCOUNT_KEY_SECRET.id), accountKey],
    ] as const) {
      await secretsClient.send(new CreateSecretCommand({ Name: name, SecretString: value ? JSON.stringify(value) : undefined }));
    }
    dynamoClient.destroy();
    sqsClient.destroy();
    secretsClient.destroy();

    const queueUrls = { payouts: payouts.url, deadLetter: payouts.deadLetterUrl, checks: checks.url };
    const env: Record<string, string> = {
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      ...Object.fromEntries([...TABLES, ...SECRETS].map((resource) => [resource.env, resourceName(stage, resource.id)])),
      [PAYOUTS_QUEUE.env]: queueUrls.payouts,
      [PAYOUTS_QUEUE.deadLetterQueue.env]: queueUrls.deadLetter,
      [CHECKS_QUEUE.env]: queueUrls.checks,
    };
    return {
      env,
      endpoints: { dynamodb: dynamo.endpoint, sqs: sqs.endpoint, secretsManager: secrets.endpoint },
      names,
      queueUrls,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
