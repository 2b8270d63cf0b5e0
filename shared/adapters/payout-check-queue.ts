import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { MAX_CHECK_DELAY_SECONDS, payoutCheck } from '@shared/messages/payout-check';
import type { PayoutCheckQueue } from '@shared/ports/payouts';
import { payoutCheckSender } from './sqs-client';

/** SQS's own limit of messages per SendMessageBatch. */
const SEND_BATCH_SIZE = 10;

/** A check asked for and not yet sent, with the promise its caller awaits. */
interface PendingCheck {
  readonly body: string;
  readonly delaySeconds: number;
  readonly done: (error?: Error) => void;
}

/** Thrown to the caller whose check SQS refused inside an otherwise accepted SendMessageBatch. */
export class CheckNotSentError extends Error {
  override name = 'CheckNotSentError';
}

/**
 * The checks queue over SQS: one message per check, delayed with DelaySeconds (whole seconds,
 * rounded up, at most SQS's 900). The checks asked for within one turn of the event loop go out
 * together, as SendMessageBatch calls of up to 10: a worker batch whose Payout answers arrive
 * together sends one request instead of one per payout, and adds no wait (the send starts on the
 * next turn, while the outcome writes those checks belong to are still in flight). Each caller's
 * promise settles with its own message: rejected when the call failed or SQS refused that entry.
 * Without a client of its own it sends through `payoutCheckSender()`, built at its first send.
 */
export function createPayoutCheckQueue(queueUrl: string, client?: SQSClient): PayoutCheckQueue {
  let pending: PendingCheck[] = [];

  async function sendBatch(batch: readonly PendingCheck[]): Promise<void> {
    try {
      const out = await (client ?? payoutCheckSender()).send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((check, i) => ({ Id: String(i), MessageBody: check.body, DelaySeconds: check.delaySeconds })),
        }),
      );
      const refused = new Map((out.Failed ?? []).map((f) => [f.Id, `${f.Code ?? 'error'}: ${f.Message ?? ''}`]));
      const sent = new Set((out.Successful ?? []).map((s) => s.Id));
      batch.forEach((check, i) => {
        const id = String(i);
        check.done(sent.has(id) ? undefined : new CheckNotSentError(`checks queue refused the message: ${refused.get(id) ?? 'no answer for it'}`));
      });
    } catch (error) {
      for (const check of batch) check.done(error as Error);
    }
  }

  function flush(): void {
    const all = pending;
    pending = [];
    for (let i = 0; i < all.length; i += SEND_BATCH_SIZE) void sendBatch(all.slice(i, i + SEND_BATCH_SIZE));
  }

  return {
    schedule(identity, payoutVersion, delaySeconds) {
      const delay = Math.min(MAX_CHECK_DELAY_SECONDS, Math.max(0, Math.ceil(delaySeconds)));
      return new Promise<void>((resolve, reject) => {
        if (pending.length === 0) setImmediate(flush);
        pending.push({
          body: JSON.stringify(payoutCheck(identity, payoutVersion)),
          delaySeconds: delay,
          done: (error) => (error ? reject(error) : resolve()),
        });
      });
    },
  };
}
