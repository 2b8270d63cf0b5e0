/** One payout-queue message as the worker's policy needs it, without the SQS envelope. */
export interface PayoutMessage {
  readonly body: string;
  readonly messageId: string;
  /** This delivery's handle: what a redelivery delay (a provider's Retry-After) acts on. */
  readonly receiptHandle: string;
  /** How many times the queue has delivered it, this time included (NaN if unreadable: the policy then retries). */
  readonly receiveCount: number;
  /** The run id a DLQ redrive put on it, when it came back from the DLQ that way. */
  readonly redriveRun?: string;
  /** When the request was first sent (ISO): carried through the DLQ and redrives, else this message's own send. */
  readonly firstSentAt?: string;
}
