/*
 * The payouts DLQ and the payouts queue as the DLQ use cases (list, show, delete, redrive) need them.
 * Type-only: the SQS adapter is shared/adapters/dead-letter.ts.
 */

/** One DLQ message as the queue gives it (a receive hides it until released or deleted). */
export interface DeadLetter {
  readonly id: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** When the message was first sent (ISO), as the queue reports it. */
  readonly sentAt?: string;
  /** Receives so far, this one included (peeking adds one). */
  readonly receiveCount: number;
  /** String message attributes (`reason`, `sourceMessageId`, the redrive marker). */
  readonly attributes: Readonly<Record<string, string>>;
}

/** The DLQ and the payouts queue, as the DLQ use cases need them. */
export interface DeadLetterQueue {
  /** Messages visible plus in flight now in the DLQ (approximate, as SQS counts). */
  approximateCount(): Promise<number>;
  /** The same count for the payouts queue: once it is 0, nothing moved can still fail again. */
  payoutsQueueCount(): Promise<number>;
  /** Receives up to 10 messages and hides them for `hideSeconds`. */
  receive(max: number, hideSeconds: number): Promise<DeadLetter[]>;
  /** Makes received messages visible again at once (visibility timeout 0). */
  release(messages: readonly DeadLetter[]): Promise<void>;
  delete(message: DeadLetter): Promise<void>;
  /** Sends the body (and attributes plus `extra`) to the payouts queue; false when the queue refused it. */
  sendToPayouts(message: DeadLetter, extra: Record<string, string>): Promise<boolean>;
}
