import { randomUUID } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { PayoutRequestInput } from '@shared/messages/payout-request';

const QUEUE_ARN = 'arn:aws:sqs:eu-west-1:000000000000:payrelay-test-payouts';

/** One SQS record as the Lambda event source mapping delivers it. */
export function sqsRecord(body: string, overrides: { messageId?: string; receiveCount?: number } = {}): SQSRecord {
  const now = String(Date.now());
  return {
    messageId: overrides.messageId ?? randomUUID(),
    receiptHandle: `rh-${randomUUID()}`,
    body,
    attributes: {
      ApproximateReceiveCount: String(overrides.receiveCount ?? 1),
      SentTimestamp: now,
      SenderId: 'AIDATEST',
      ApproximateFirstReceiveTimestamp: now,
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: QUEUE_ARN,
    awsRegion: 'eu-west-1',
  };
}

/** An SQS batch of raw bodies. */
export function sqsEvent(bodies: readonly string[], options: { receiveCount?: number } = {}): SQSEvent {
  return { Records: bodies.map((body) => sqsRecord(body, options)) };
}

/** An SQS batch of payout requests (serialized the way producers and the CLI do). */
export function payoutRequestEvent(requests: readonly PayoutRequestInput[], options: { receiveCount?: number } = {}): SQSEvent {
  return sqsEvent(
    requests.map((r) => JSON.stringify(r)),
    options,
  );
}

/** An SQS batch built from messages received from a real (emulated) queue, as the event source mapping would. */
export function sqsEventFromMessages(messages: readonly Message[]): SQSEvent {
  return {
    Records: messages.map((m) => ({
      ...sqsRecord(m.Body ?? '', {
        messageId: m.MessageId,
        receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? '1'),
      }),
      receiptHandle: m.ReceiptHandle ?? '',
    })),
  };
}
