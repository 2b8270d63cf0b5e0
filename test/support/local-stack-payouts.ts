import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { LocalStack } from '@local/stack';
import type { PayoutRepository } from '@shared/ports/payouts';

/** What an end-to-end test of the local stack uses to hand it messages and read its payouts back. */
export interface LocalStackPayouts {
  readonly repository: PayoutRepository;
  /** Sends a message body to one of the stack's queues; `reason` becomes the attribute the DLQ's messages carry. */
  send(queueUrl: string, body: string, reason?: string): Promise<void>;
  close(): void;
}

/**
 * An SQS client on the stack's fauxqs and the payouts repository on its dynalite. The repository is
 * imported only now: its DynamoDB client reads the endpoint the stack has just put in the environment.
 */
export async function localStackPayouts(stack: LocalStack): Promise<LocalStackPayouts> {
  const sqs = new SQSClient({ region: stack.env.AWS_REGION, endpoint: stack.env.AWS_ENDPOINT_URL_SQS, useQueueUrlAsEndpoint: false });
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  return {
    repository: createPayoutRepository(stack.names.payoutsTable),
    async send(queueUrl, body, reason) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          ...(reason ? { MessageAttributes: { reason: { DataType: 'String', StringValue: reason } } } : {}),
        }),
      );
    },
    close: () => sqs.destroy(),
  };
}
