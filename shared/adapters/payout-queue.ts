import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { PayoutRequestSender } from '@shared/app/retry-payout';
import { sqsClient } from './aws-clients';

/** The payouts queue as a sender of single payout requests (a retry, a console action). */
export function createPayoutQueue(queueUrl: string, client: SQSClient = sqsClient): PayoutRequestSender {
  return {
    async send(request) {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(request) }));
    },
  };
}
