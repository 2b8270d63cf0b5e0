import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { MAX_CHECK_DELAY_SECONDS, payoutCheck } from '@shared/messages/payout-check';
import type { PayoutCheckQueue } from '@shared/ports/payouts';
import { sqsClient } from './sqs-client';

/**
 * The checks queue over SQS: one message per check, delayed with DelaySeconds (whole seconds,
 * rounded up, at most SQS's 900).
 */
export function createPayoutCheckQueue(queueUrl: string, client: SQSClient = sqsClient): PayoutCheckQueue {
  return {
    async schedule(identity, payoutVersion, delaySeconds) {
      const delay = Math.min(MAX_CHECK_DELAY_SECONDS, Math.max(0, Math.ceil(delaySeconds)));
      await client.send(
        new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(payoutCheck(identity, payoutVersion)), DelaySeconds: delay }),
      );
    },
  };
}
