import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { PayoutMessage } from '@shared/messages/queue-message';
import { FIRST_SENT_ATTRIBUTE, REDRIVE_RUN_ATTRIBUTE } from '@shared/messages/redrive';
import type { MessageRedelivery, PayoutRequestQueue } from '@shared/ports/payouts';
import { sqsClient } from './sqs-client';

/** The payouts queue as a sender of single payout requests (a retry, a console action). */
export function createPayoutQueue(queueUrl: string, client: SQSClient = sqsClient()): PayoutRequestQueue {
  return {
    async send(messageBody) {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: messageBody }));
    },
  };
}

/** SQS's longest visibility time-out (12 hours). */
const MAX_VISIBILITY_SECONDS = 12 * 60 * 60;

/**
 * The payouts queue as the worker's redelivery delay: ChangeMessageVisibility on the received
 * message, rounded up to whole seconds (at least 1, so a Retry-After of 0 never makes a tight loop).
 */
export function createMessageRedelivery(queueUrl: string, client?: SQSClient): MessageRedelivery {
  return {
    async delay(receiptHandle, delayMs) {
      const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.max(1, Math.ceil(delayMs / 1000)));
      await (client ?? sqsClient()).send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
    },
  };
}

/** Reads what the message policy needs from an SQS record (a missing receive count counts as the first receive). */
export function payoutMessageFromSqs(record: SQSRecord): PayoutMessage {
  const redriveRun = record.messageAttributes?.[REDRIVE_RUN_ATTRIBUTE]?.stringValue;
  const sent = Number(record.attributes.SentTimestamp);
  const firstSentAt = record.messageAttributes?.[FIRST_SENT_ATTRIBUTE]?.stringValue ?? (Number.isFinite(sent) && sent > 0 ? new Date(sent).toISOString() : undefined);
  return {
    body: record.body,
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    receiveCount: Number(record.attributes.ApproximateReceiveCount ?? '1'),
    ...(redriveRun ? { redriveRun } : {}),
    ...(firstSentAt ? { firstSentAt } : {}),
  };
}
