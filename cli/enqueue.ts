import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Payout, PayoutState } from '@shared/domain/payout';
import type { PayoutRepository } from '@shared/ports/payouts';
import { acceptRequest, type PayoutRequest } from '@shared/messages/payout-request';

/** SQS's own limit per SendMessageBatch. */
export const SEND_BATCH_SIZE = 10;
const SEND_ATTEMPTS = 3;

export interface EnqueueDeps {
  readonly repository: PayoutRepository;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly now?: () => Date;
  /** Called after each batch with the number of rows handled so far. */
  readonly onProgress?: (done: number) => void;
}

export interface EnqueueOptions {
  /**
   * Also send rows whose payout exists but is still ACCEPTED (nothing processed it yet). Use after a
   * crash between "payout recorded" and "message sent"; the worker's own guards make a second
   * message for an ACCEPTED payout harmless.
   */
  readonly resendAccepted?: boolean;
  /**
   * Also send rows whose UNKNOWN payout carries a resubmission token: the reconciler sets one when the
   * provider has not known the reference for the grace period and RESUBMIT_UNKNOWN_NOT_FOUND is on
   * (money-safety rule 1's one exception). The worker spends the token once; extra messages do nothing.
   */
  readonly resendAuthorized?: boolean;
}

export interface EnqueueReport {
  readonly enqueued: string[];
  readonly skipped: Array<{ withdrawal_reference: string; state: PayoutState }>;
  /** Rows recorded as ACCEPTED whose message SQS refused even after retries. */
  readonly failed: Array<{ withdrawal_reference: string; reason: string }>;
}

/**
 * Enqueues validated payout requests so that running it again with the same rows enqueues nothing
 * twice. For each row the payout is first recorded with a conditional create (ACCEPTED, exactly what
 * the worker itself records); only a row whose payout was newly created is sent. A row whose payout
 * already exists is skipped and reported with its state.
 *
 * A crash after the create and before the send leaves a payout in ACCEPTED with no message: a rerun
 * skips it (reported as ACCEPTED), `--resend-accepted` sends it, and if nobody does, the reconciler
 * hands it to NEEDS_REVIEW ("nothing was paid") after REVIEW_AFTER_MINUTES, so it is never lost.
 */
export async function enqueuePayouts(
  requests: readonly PayoutRequest[],
  deps: EnqueueDeps,
  options: EnqueueOptions = {},
): Promise<EnqueueReport> {
  const now = deps.now ?? (() => new Date());
  const report: EnqueueReport = { enqueued: [], skipped: [], failed: [] };
  for (let start = 0; start < requests.length; start += SEND_BATCH_SIZE) {
    const batch = requests.slice(start, start + SEND_BATCH_SIZE);
    // The ten conditional creates of a batch are independent single-item writes: run them together.
    const created = await Promise.all(
      batch.map((request) =>
        deps.repository.createAccepted(acceptRequest(request, now())),
      ),
    );
    const toSend: PayoutRequest[] = [];
    batch.forEach((request, i) => {
      const { created: isNew, payout } = created[i] as { created: boolean; payout: Payout };
      const resend =
        (options.resendAccepted === true && payout.state === 'ACCEPTED') ||
        (options.resendAuthorized === true && payout.state === 'UNKNOWN' && payout.record.resubmitAuthorized === true);
      if (isNew || resend) toSend.push(request);
      else report.skipped.push({ withdrawal_reference: request.withdrawal_reference, state: payout.state });
    });
    await sendBatch(toSend, deps, report);
    deps.onProgress?.(Math.min(start + SEND_BATCH_SIZE, requests.length));
  }
  return report;
}

/** Sends up to 10 messages, retrying the entries SQS reports as failed. */
async function sendBatch(requests: readonly PayoutRequest[], deps: EnqueueDeps, report: EnqueueReport): Promise<void> {
  let pending = requests.map((request, i) => ({ id: String(i), request }));
  let lastReason = new Map<string, string>();
  for (let attempt = 1; attempt <= SEND_ATTEMPTS && pending.length > 0; attempt += 1) {
    try {
      const out = await deps.sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: deps.queueUrl,
          Entries: pending.map(({ id, request }) => ({ Id: id, MessageBody: JSON.stringify(request) })),
        }),
      );
      for (const ok of out.Successful ?? []) {
        const sent = pending.find((p) => p.id === ok.Id);
        if (sent) report.enqueued.push(sent.request.withdrawal_reference);
      }
      const failedIds = new Set((out.Failed ?? []).map((f) => f.Id));
      lastReason = new Map((out.Failed ?? []).map((f) => [f.Id ?? '', `${f.Code ?? 'error'}: ${f.Message ?? ''}`]));
      pending = pending.filter((p) => failedIds.has(p.id));
    } catch (error) {
      lastReason = new Map(pending.map((p) => [p.id, `${(error as Error).name}: ${(error as Error).message}`]));
    }
    if (pending.length > 0 && attempt < SEND_ATTEMPTS) await new Promise((r) => setTimeout(r, 200 * attempt));
  }
  for (const p of pending) {
    report.failed.push({ withdrawal_reference: p.request.withdrawal_reference, reason: lastReason.get(p.id) ?? 'not sent' });
  }
}
