import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * Every message on a queue now, with its attributes, received and deleted in batches of ten: what
 * a test reads off a dead-letter queue to see what ended there and why. Throws if a delete fails,
 * so a message never stays behind to show up in the next test.
 */
export async function takeAllMessages(sqs: SQSClient, queueUrl: string): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const page = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, MessageAttributeNames: ['All'] }));
    const messages = page.Messages ?? [];
    if (messages.length === 0) return all;
    all.push(...messages);
    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })) }),
    );
    if (deleted.Failed?.length) throw new Error(`could not delete ${deleted.Failed.length} message(s) from ${queueUrl}: ${deleted.Failed.map((f) => f.Message ?? f.Code).join('; ')}`);
  }
}
