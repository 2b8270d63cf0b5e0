import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { InvalidPayoutRequestError, parsePayoutRequest, type PayoutRequest } from '@shared/messages/payout-request';
import type { PayoutMessage } from '@shared/messages/queue-message';
import { FIRST_SENT_ATTRIBUTE, REDRIVE_RUN_ATTRIBUTE } from '@shared/messages/redrive';
import { METRIC } from '@shared/observability/metric-names';
import type { DeadLetterSink, MessageRedelivery } from '@shared/ports/payouts';
import type { Log, Telemetry } from '@shared/ports/runtime';
import { createKeyedLimiter } from './keyed-limiter';
import { RetryLaterError, type ProcessPayoutResult } from './process-payout';

export interface PayoutMessageDeps {
  readonly processPayout: (request: PayoutRequest) => Promise<ProcessPayoutResult>;
  /** Records an invalid request as REJECTED; false when a payout of that identity already exists. */
  readonly rejectInvalid: (identity: PayoutIdentity, reason: string) => Promise<boolean>;
  readonly deadLetters: DeadLetterSink;
  /** The payouts queue, to hold a message back as long as the provider's Retry-After asks. */
  readonly redelivery: MessageRedelivery;
  readonly telemetry: Telemetry;
  readonly log: Log;
  /** The queue's maxReceiveCount (PAYOUTS_MAX_RECEIVE_COUNT). */
  readonly maxReceiveCount: number;
  /** Messages of one batch processed at once (WORKER_CONCURRENCY). */
  readonly concurrency: number;
}

/** One batch of queue messages. */
export interface PayoutBatch {
  /** Resolves when the message is done with (processed, REJECTED or sent to the DLQ); throws when the queue should deliver it again. */
  handle(message: PayoutMessage): Promise<void>;
  /** Called once every message of the batch has been handled. */
  end(): void;
}

/**
 * The worker's message policy. Returns a function that starts a batch (see PayoutBatch).
 * - A message that is not a valid payout request is never retried: REJECTED with its reason when it
 *   names an identity that has no payout yet, else sent to the DLQ with the reason (a stored payout
 *   is never touched by a message that failed validation).
 * - A request that conflicts with the stored payout of its identity goes to the DLQ for a person.
 * - A failure is retried by redelivery, except on the last receive the queue allows: then the worker
 *   sends it to the DLQ itself, so the reason travels with it (money-safety rule 3).
 * - When the provider gave a Retry-After, the message comes back no earlier (if the queue refuses
 *   the delay, it still comes back, after the queue's visibility time-out).
 * - Messages of one payout identity never run at once within a batch.
 * - A batch in which every message failed is counted (WorkerBatchFailed): a queue making no progress.
 */
export function createPayoutMessageHandler(deps: PayoutMessageDeps): () => PayoutBatch {
  const deadLetter = async (message: PayoutMessage, reason: string): Promise<void> => {
    // A redriven message keeps its redrive run's marker, so that run counts it as failed again instead of moving it again.
    const attributes: Record<string, string> = { sourceMessageId: message.messageId };
    if (message.redriveRun) attributes[REDRIVE_RUN_ATTRIBUTE] = message.redriveRun;
    if (message.firstSentAt) attributes[FIRST_SENT_ATTRIBUTE] = message.firstSentAt;
    await deps.deadLetters.send(message.body, reason, attributes);
    deps.telemetry.count(METRIC.dlqSend);
    deps.log.warn('payout request sent to the DLQ', { messageId: message.messageId, reason });
  };

  const delayRedelivery = async (message: PayoutMessage, retryAfterMs: number, keys: Record<string, string>): Promise<void> => {
    try {
      await deps.redelivery.delay(message.receiptHandle, retryAfterMs);
    } catch (error) {
      deps.log.warn('could not delay the retry as the provider asked; it comes back after the visibility time-out', {
        ...keys,
        retryAfterMs,
        error: (error as Error).name,
      });
    }
  };

  return () => {
    const limiter = createKeyedLimiter(deps.concurrency);
    let handled = 0;
    let failed = 0;
    const handle = async (message: PayoutMessage): Promise<void> => {
      let request: PayoutRequest;
      try {
        request = parsePayoutRequest(message.body);
      } catch (error) {
        if (!(error instanceof InvalidPayoutRequestError)) throw error;
        // rejectInvalid adds "invalid payout request: " itself; the problems alone keep it from saying so twice.
        if (error.identity && (await deps.rejectInvalid(error.identity, error.problems))) return;
        return deadLetter(message, error.message);
      }
      const key = payoutKey(request);
      const keys = { payoutKey: key, withdrawalReference: request.withdrawal_reference, messageId: message.messageId };
      try {
        const result = await limiter.run(key, () => deps.processPayout(request));
        deps.log.info('payout request processed', { ...keys, outcome: result.outcome, state: result.state, reason: result.reason });
        if (result.outcome === 'conflict') await deadLetter(message, `conflicts with the stored payout: ${result.reason ?? ''}`);
      } catch (error) {
        const reason = error instanceof RetryLaterError ? error.message : `${(error as Error).name}: processing failed`;
        if (message.receiveCount >= deps.maxReceiveCount) {
          await deadLetter(message, `gave up after ${message.receiveCount} receives: ${reason}`);
          return;
        }
        const retryAfterMs = error instanceof RetryLaterError ? error.retryAfterMs : undefined;
        if (retryAfterMs !== undefined) await delayRedelivery(message, retryAfterMs, keys);
        deps.log.warn('payout request will be retried', {
          ...keys,
          receives: message.receiveCount,
          reason,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        });
        throw error;
      }
    };
    return {
      handle: async (message) => {
        handled += 1;
        try {
          await handle(message);
        } catch (error) {
          failed += 1;
          throw error;
        }
      },
      end: () => {
        if (handled > 0 && failed === handled) deps.telemetry.count(METRIC.workerBatchFailed);
      },
    };
  };
}
