import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetterSink } from '@shared/ports/payouts';
import { sqsClient } from './aws-clients';

/** SQS message attributes hold at most 256 KiB in all; a reason is a line, not a document. */
const MAX_REASON = 1000;

/**
 * The payouts DLQ as a sink for messages the worker cannot process: the original body, unchanged,
 * with the reason in the `reason` message attribute (and any extra attributes, e.g. the source
 * message id), so `payrelay dlq` can show why and redrive it after a fix.
 */
export function createDeadLetterSink(queueUrl: string, client: SQSClient = sqsClient): DeadLetterSink {
  return {
    async send(body, reason, attributes = {}) {
      const all: Record<string, string> = { ...attributes, reason: reason.slice(0, MAX_REASON) };
      await client.send(
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
