import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FIRST_SENT_ATTRIBUTE } from '@shared/messages/redrive';
import type { DeadLetterQueue } from '@shared/ports/dead-letters';
import type { DeadLetterSink } from '@shared/ports/payouts';
import { sqsClient } from './sqs-client';

/** SQS message attributes hold at most 256 KiB in all; a reason is a line, not a document. */
const MAX_REASON = 1000;

/**
 * The payouts DLQ as a sink for messages the worker cannot process: the original body, unchanged,
 * with the reason in the `reason` message attribute (and any extra attributes, e.g. the source
 * message id), so `payrelay dlq` can show why and redrive it after a fix.
 */
export function createDeadLetterSink(queueUrl: string, client?: SQSClient): DeadLetterSink {
  return {
    async send(body, reason, attributes = {}) {
      const all: Record<string, string> = { ...attributes, reason: reason.slice(0, MAX_REASON) };
      await (client ?? sqsClient()).send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: body,
          MessageAttributes: Object.fromEntries(
            Object.entries(all).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
          ),
        }),
      );
    },
  };
}

const stringAttributes = (m: Message): Record<string, string> =>
  Object.fromEntries(
    Object.entries(m.MessageAttributes ?? {})
      .filter(([, v]) => v.DataType === 'String' && v.StringValue !== undefined)
      .map(([k, v]) => [k, v.StringValue as string]),
  );

/** When a message was first sent: the time it carries (FIRST_SENT_ATTRIBUTE), else the queue's own stamp. */
function firstSentAt(m: Message): { sentAt?: string } {
  const carried = m.MessageAttributes?.[FIRST_SENT_ATTRIBUTE]?.StringValue;
  if (carried !== undefined && !Number.isNaN(Date.parse(carried))) return { sentAt: carried };
  return m.Attributes?.SentTimestamp ? { sentAt: new Date(Number(m.Attributes.SentTimestamp)).toISOString() } : {};
}

/**
 * The payouts DLQ for the operator use cases (list, show, delete, redrive), over SQS. Receives ask for
 * all attributes; `release` sets the visibility timeout back to 0 so a peek consumes nothing.
 */
export function createDeadLetterQueue(dlqUrl: string, queueUrl: string, client: SQSClient = sqsClient()): DeadLetterQueue {
  const queueCount = async (url: string): Promise<number> => {
    const out = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    );
    return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
  };
  return {
    approximateCount: () => queueCount(dlqUrl),
    payoutsQueueCount: () => queueCount(queueUrl),
    async receive(max, hideSeconds) {
      const out = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: dlqUrl,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: 0,
          VisibilityTimeout: hideSeconds,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      return (out.Messages ?? []).map((m) => ({
        id: m.MessageId ?? '',
        receiptHandle: m.ReceiptHandle ?? '',
        body: m.Body ?? '',
        ...firstSentAt(m),
        receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 1),
        attributes: stringAttributes(m),
      }));
    },
    async release(messages) {
      for (let i = 0; i < messages.length; i += 10) {
        const page = messages.slice(i, i + 10);
        await client.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: dlqUrl,
            Entries: page.map((m, j) => ({ Id: String(j), ReceiptHandle: m.receiptHandle, VisibilityTimeout: 0 })),
          }),
        );
      }
    },
    async delete(message) {
      await client.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: message.receiptHandle }));
    },
    async sendToPayouts(message, extra) {
      try {
        await client.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: message.body,
            MessageAttributes: Object.fromEntries(
              Object.entries({ ...message.attributes, ...(message.sentAt ? { [FIRST_SENT_ATTRIBUTE]: message.sentAt } : {}), ...extra }).map(([name, value]) => [
                name,
                { DataType: 'String', StringValue: value },
              ]),
            ),
          }),
        );
        return true;
      } catch {
        return false;
      }
    },
  };
}
