import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { PAYOUTS_TABLE } from '@shared/config/resources';
import { useLocalAws } from '@test/support/local-aws';

const local = useLocalAws({
  stage: 'test',
  maxReceiveCount: 2,
  visibilityTimeoutSeconds: 1,
  secrets: { provider: { partner_public_key: 'pk' } },
});

describe('local AWS emulators', () => {
  it('creates the tables with the indexes of the shared definitions', async () => {
    const client = new DynamoDBClient({ endpoint: local().endpoints.dynamodb });
    const table = await client.send(new DescribeTableCommand({ TableName: local().names.payoutsTable }));
    expect(table.Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(table.Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName).sort()).toEqual(
      PAYOUTS_TABLE.indexes.map((i) => i.indexName).sort(),
    );
  });

  it('reads, writes and refuses unknown secrets through the real SDK client', async () => {
    const client = new SecretsManagerClient({ endpoint: local().endpoints.secretsManager });
    const first = await client.send(new GetSecretValueCommand({ SecretId: local().names.providerSecret }));
    expect(JSON.parse(first.SecretString ?? '')).toEqual({ partner_public_key: 'pk' });
    await client.send(new PutSecretValueCommand({ SecretId: first.ARN, SecretString: '{"partner_public_key":"pk2"}' }));
    const second = await client.send(new GetSecretValueCommand({ SecretId: local().names.providerSecret }));
    expect(second.SecretString).toBe('{"partner_public_key":"pk2"}');
    await expect(client.send(new GetSecretValueCommand({ SecretId: 'nope' }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    await expect(client.send(new GetSecretValueCommand({ SecretId: local().names.kycSecret }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });

  it('moves a message that is received and never deleted to the DLQ after maxReceiveCount', async () => {
    const sqs = new SQSClient({ endpoint: local().endpoints.sqs, useQueueUrlAsEndpoint: false });
    const { payouts, deadLetter } = local().queueUrls;
    await sqs.send(new SendMessageCommand({ QueueUrl: payouts, MessageBody: '{"poison":true}' }));
    for (let receive = 0; receive < 2; receive++) {
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: payouts, WaitTimeSeconds: 3, VisibilityTimeout: 1 }));
      expect(got.Messages).toHaveLength(1);
    }
    const moved = await sqs.send(new ReceiveMessageCommand({ QueueUrl: payouts, WaitTimeSeconds: 3 }));
    expect(moved.Messages ?? []).toHaveLength(0);
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: deadLetter, WaitTimeSeconds: 1 }));
    expect(dead.Messages?.[0]?.Body).toBe('{"poison":true}');
    await sqs.send(new DeleteMessageCommand({ QueueUrl: deadLetter, ReceiptHandle: dead.Messages?.[0]?.ReceiptHandle }));
    const attributes = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: deadLetter, AttributeNames: ['ApproximateNumberOfMessages'] }));
    expect(attributes.Attributes?.ApproximateNumberOfMessages).toBe('0');
  });
});
