import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { LOCAL_ACCOUNT_ID, type LocalFunction } from './lambda';

export interface SqsPollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly fn: LocalFunction;
  readonly region: string;
  /** Records per invocation, as the event source mapping's BatchSize (max 10 for a standard queue). */
  readonly batchSize?: number;
  /** Long-poll wait per ReceiveMessage, in seconds (the event source mapping uses 20). */
  readonly waitSeconds?: number;
  /** Parallel pollers, like the mapping's concurrent batches. */
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
}

export interface SqsPollerHandle {
  /** Batches invoked, records deleted, records left for redelivery; for the console and tests. */
  readonly stats: { batches: number; deleted: number; failed: number };
  stop(): Promise<void>;
}

function toRecordAttributes(values: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes {
  const out: SQSMessageAttributes = {};
  for (const [name, v] of Object.entries(values ?? {})) {
    out[name] = {
      dataType: v.DataType ?? 'String',
      ...(v.StringValue !== undefined ? { stringValue: v.StringValue } : {}),
      ...(v.BinaryValue !== undefined ? { binaryValue: Buffer.from(v.BinaryValue).toString('base64') } : {}),
      stringListValues: v.StringListValues ?? [],
      binaryListValues: (v.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
    };
  }
  return out;
}

/** Builds the SQS record Lambda delivers for one received message. */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const a = message.Attributes ?? {};
  const now = String(Date.now());
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? now,
      SenderId: a.SenderId ?? LOCAL_ACCOUNT_ID,
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? now,
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      ...(a.MessageDeduplicationId ? { MessageDeduplicationId: a.MessageDeduplicationId } : {}),
      ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
    },
    messageAttributes: toRecordAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/**
 * Which records to delete after an invocation, following the event source mapping with
 * ReportBatchItemFailures: a thrown error, or a response naming an id that is not in the batch,
 * fails the whole batch; otherwise every record not listed as a failure succeeded.
 */
export function successfulRecords(records: readonly SQSRecord[], response: unknown): SQSRecord[] {
  if (response === undefined || response === null) return [...records];
  const failures = (response as Partial<SQSBatchResponse>).batchItemFailures;
  if (failures === undefined || failures === null) return [...records];
  if (!Array.isArray(failures)) return [];
  const ids = new Set(records.map((r) => r.messageId));
  const failed = new Set<string>();
  for (const f of failures as Array<{ itemIdentifier?: unknown }>) {
    if (typeof f?.itemIdentifier !== 'string' || !ids.has(f.itemIdentifier)) return [];
    failed.add(f.itemIdentifier);
  }
  return records.filter((r) => !failed.has(r.messageId));
}

async function queueArnOf(sqs: SQSClient, queueUrl: string, region: string): Promise<string> {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  return out.Attributes?.QueueArn ?? `arn:aws:sqs:${region}:${LOCAL_ACCOUNT_ID}:${queueUrl.split('/').pop() ?? ''}`;
}

/**
 * A local stand-in for Lambda's SQS event source mapping: long-polls the queue, invokes the worker
 * with real SQS batch events, deletes the records that succeeded and leaves the reported failures
 * to reappear after the visibility time-out, so the queue's redrive policy moves poison messages
 * to the DLQ exactly as in AWS.
 */
export async function startSqsPoller(options: SqsPollerOptions): Promise<SqsPollerHandle> {
  const { sqs, queueUrl, fn, region } = options;
  const log = options.log ?? (() => {});
  const batchSize = options.batchSize ?? 10;
  const waitSeconds = options.waitSeconds ?? 20;
  const queueArn = await queueArnOf(sqs, queueUrl, region);
  const stats = { batches: 0, deleted: 0, failed: 0 };
  const abort = new AbortController();
  let stopped = false;

  const pollOnce = async (): Promise<void> => {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: batchSize,
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return;
    const records = messages.map((m) => toSqsRecord(m, queueArn, region));
    const event: SQSEvent = { Records: records };
    stats.batches += 1;
    let response: unknown;
    let succeeded: SQSRecord[];
    try {
      response = await fn.invoke(event);
      succeeded = successfulRecords(records, response);
    } catch (error) {
      log(`poller: ${fn.name} threw ${(error as Error).name}: ${(error as Error).message}; the whole batch is retried`);
      succeeded = [];
    }
    stats.failed += records.length - succeeded.length;
    for (let i = 0; i < succeeded.length; i += 10) {
      const chunk = succeeded.slice(i, i + 10);
      const out = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((r, j) => ({ Id: String(j), ReceiptHandle: r.receiptHandle })),
        }),
      );
      stats.deleted += out.Successful?.length ?? 0;
      for (const f of out.Failed ?? []) log(`poller: delete failed for a record: ${f.Code ?? ''} ${f.Message ?? ''}`);
    }
    log(`poller: batch of ${records.length} -> ${succeeded.length} done, ${records.length - succeeded.length} left for redelivery`);
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        await pollOnce();
      } catch (error) {
        if (stopped) return;
        log(`poller: ${(error as Error).name}: ${(error as Error).message}; retrying in 1 s`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };
  const loops = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () => loop());

  return {
    stats,
    async stop() {
      stopped = true;
      abort.abort();
      // An invocation in flight finishes; only the idle long poll is cut short.
      await Promise.allSettled(loops);
    },
  };
}
