import {
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * Moves messages from the DLQ to the main queue: receive up to 10, send them (body and attributes
 * unchanged), and delete from the DLQ only the ones the main queue accepted. A crash between send
 * and delete leaves a copy in the DLQ; the worker's per-identity guards make the duplicate harmless.
 * Stops when the DLQ answers empty or `max` messages moved.
 */
export async function redrive(sqs: SQSClient, dlqUrl: string, queueUrl: string, max = Number.POSITIVE_INFINITY): Promise<{ moved: number; failed: number }> {
  let moved = 0;
  let failed = 0;
  const failedIds = new Set<string>();
  while (moved + failed < max) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MaxNumberOfMessages: Math.min(10, max - moved - failed),
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        // Long enough that a message we fail to move is not received again in this run.
        VisibilityTimeout: 60,
      }),
    );
    const messages = (out.Messages ?? []).filter((m) => !failedIds.has(m.MessageId ?? ''));
    if (messages.length === 0) break;
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: messages.map((m, i) => ({
          Id: String(i),
          MessageBody: m.Body ?? '',
          ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length > 0 ? { MessageAttributes: m.MessageAttributes } : {}),
        })),
      }),
    );
    const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
    const toDelete = messages.filter((_, i) => ok.has(String(i)));
    messages.forEach((m, i) => {
      if (!ok.has(String(i))) failedIds.add(m.MessageId ?? '');
    });
    failed += messages.length - toDelete.length;
    if (toDelete.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: dlqUrl,
          Entries: toDelete.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      );
      moved += toDelete.length;
    }
  }
  return { moved, failed };
}
