import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { PayoutRequestQueue } from '@shared/ports/payouts';
import { sqsClient } from './aws-clients';

/** The payouts queue as a sender of single payout requests (a retry, a console action). */
export function createPayoutQueue(queueUrl: string, client: SQSClient = sqsClient): PayoutRequestQueue {
  return {
    async send(messageBody) {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: messageBody }));
    },
  };
}
