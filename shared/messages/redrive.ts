/**
 * The message attribute a DLQ redrive puts on what it moves (its run id). The worker copies it when it
 * dead-letters the message again, so that run counts the message as failed again instead of moving it
 * a second time: a poison message cannot loop.
 */
export const REDRIVE_RUN_ATTRIBUTE = 'payrelayRedriveRun';

/**
 * The message attribute that carries when a payout request was first sent (ISO). Sending to the DLQ
 * (the worker, with the reason) and redriving from it make new messages, which the queue stamps
 * anew: this keeps the first send's time with them, so the DLQ listing shows when it was asked for.
 */
export const FIRST_SENT_ATTRIBUTE = 'payrelayFirstSentAt';
