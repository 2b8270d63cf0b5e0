import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { cachedSecret, kycSecretSchema, providerSecretSchema, SecretNotConfiguredError } from '@shared/adapters/secrets';
import { kycCallbackEvent, lambdaContext, payoutNotificationEvent } from '@test/factories/http-events';

/*
 * A fresh deploy creates both secrets with no value (the template owns none). Until an operator
 * runs `payrelay secrets put`, the receivers must refuse with 503 not_configured and store nothing,
 * never answer 500 with a stack trace.
 */

type HttpHandler = (event: APIGatewayProxyEventV2, context: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyStructuredResultV2>;

let aws: LocalAws;
let kycCallback: HttpHandler;
let payoutNotification: HttpHandler;
let doc: DynamoDBDocumentClient;

beforeAll(async () => {
  // No `secrets` option: both secrets exist but have no value, as after `cdk deploy`.
  aws = await startLocalAws({ stage: 'unconfigured' });
  Object.assign(process.env, aws.env);
  // Handlers read their configuration at module load: import them only now.
  kycCallback = ((await import('@functions/kyc-callback')) as unknown as { handler: HttpHandler }).handler;
  payoutNotification = ((await import('@functions/payout-notification')) as unknown as { handler: HttpHandler }).handler;
  doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: aws.env.AWS_REGION, endpoint: aws.endpoints.dynamodb }));
});

afterAll(async () => {
  doc?.destroy();
  await aws?.stop();
});

describe('receivers before `payrelay secrets put`', () => {
  it('answer 503 not_configured on both routes and store nothing', async () => {
    const kyc = await kycCallback(
      kycCallbackEvent('a-token-nobody-configured-yet', { event: 'applicantStatusChanged', user_reference: 'u-1', status: 'approved' }),
      lambdaContext('kyc-callback'),
    );
    const notification = await payoutNotification(
      payoutNotificationEvent({ withdrawal_reference: 'WD-1', status: 'COMPLETED', signature: 'ab'.repeat(64) }, 'Bearer some-public-key'),
      lambdaContext('payout-notification'),
    );
    for (const result of [kyc, notification]) {
      expect(result.statusCode).toBe(503);
      expect(JSON.parse(result.body ?? '{}')).toEqual({ error: 'not_configured', message: 'payrelay is not configured yet; retry later' });
      expect(result.body).not.toMatch(/\bat \w|secret/);
    }
    const stored = await doc.send(new ScanCommand({ TableName: aws.names.eventsTable }));
    expect(stored.Items ?? []).toEqual([]);
  });

  it('names the empty secret in the error the functions log', async () => {
    for (const [secretId, schema] of [
      [aws.names.kycSecret, kycSecretSchema],
      [aws.names.providerSecret, providerSecretSchema],
    ] as const) {
      const read = cachedSecret(secretId, schema as typeof kycSecretSchema).get();
      await expect(read).rejects.toBeInstanceOf(SecretNotConfiguredError);
      await expect(cachedSecret(secretId, schema as typeof kycSecretSchema).get()).rejects.toThrow(`secret ${secretId} has no value yet: put it with \`payrelay secrets put\``);
    }
  });
});
