/**
 * The message attribute a DLQ redrive puts on what it moves (its run id). The worker copies it when it
 * dead-letters the message again, so that run counts the message as failed again instead of moving it
 * a second time: a poison message cannot loop.
 */
export const REDRIVE_RUN_ATTRIBUTE = 'payrelayRedriveRun';
