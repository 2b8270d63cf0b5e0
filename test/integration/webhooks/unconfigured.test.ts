import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { cachedSecret, kycSecretSchema, providerSecretSchema, SecretFormatError, SecretNotConfiguredError } from '@shared/adapters/secrets';
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

  it('refuses a stored key with a line break or spaces around it, naming the field and the rule, never the value', async () => {
    // The last test of the file: it gives the provider secret a value.
    const secrets = new SecretsManagerClient({ region: aws.env.AWS_REGION, endpoint: aws.endpoints.secretsManager });
    const value = {
      partner_public_key: 'pk-PADDED-VALUE-1',
      partner_secret_key: 'sk-PADDED-VALUE-2\n',
      merchant_secret_key: 'mk-PADDED-VALUE-3',
      partner_id: '  ',
      platform_merchant_id: 'merchant-1',
    };
    await secrets.send(new PutSecretValueCommand({ SecretId: aws.names.providerSecret, SecretString: JSON.stringify(value) }));
    secrets.destroy();
    const read = cachedSecret(aws.names.providerSecret, providerSecretSchema).get();
    await expect(read).rejects.toBeInstanceOf(SecretFormatError);
    const message = await cachedSecret(aws.names.providerSecret, providerSecretSchema)
      .get({ forceFetch: true })
      .catch((error: Error) => error.message);
    expect(message).toBe(
      `secret ${aws.names.providerSecret} is not valid: partner_secret_key: has spaces or line breaks at its start or end (a copy-paste slip?); partner_id: is empty; put it again with \`payrelay secrets put\``,
    );
    expect(message).not.toContain('PADDED-VALUE');
  });
});
