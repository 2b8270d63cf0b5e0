import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Payout, PayoutState } from '@shared/domain/payout';
import type { AccountFingerprints, PayoutRepository } from '@shared/ports/payouts';
import { acceptRequest, fieldsDifferingFromStored, type PayoutRequest } from '@shared/messages/payout-request';
import type { EnqueueJournal } from './enqueue-journal';
import { identityKey } from './payout-file';

/** SQS's own limit per SendMessageBatch. */
export const SEND_BATCH_SIZE = 10;
/**
 * Batches in flight at once (each: 10 conditional creates, then one SendMessageBatch). Enough to keep
 * DynamoDB and SQS busy from one process; small enough that a stop finishes within a second.
 */
export const DEFAULT_ENQUEUE_CONCURRENCY = 8;
const SEND_ATTEMPTS = 3;

export interface EnqueueDeps {
  readonly repository: PayoutRepository;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** The stack's account fingerprints, stored on each payout created (absent: a stack from before the key). */
  readonly fingerprints?: AccountFingerprints;
  readonly now?: () => Date;
  /** Called after each batch with the number of rows handled so far. */
  readonly onProgress?: (done: number) => void;
  /** Batches in flight (default DEFAULT_ENQUEUE_CONCURRENCY). */
  readonly concurrency?: number;
  /** Write-ahead journal, so a run stopped at any point can be completed by running it again. */
  readonly journal?: EnqueueJournal;
  /** Stops taking new rows when aborted; the batches in flight still finish (created AND sent). */
  readonly signal?: AbortSignal;
}

export interface EnqueueOptions {
  /**
   * Also send rows whose payout exists but is still ACCEPTED (nothing processed it yet). For a crash
   * the journal does not know about (another machine, a deleted journal); the worker's own guards
   * make a second message for an ACCEPTED payout harmless.
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
  /** Rows sent by this run (withdrawal references). */
  readonly enqueued: string[];
  /** Of `enqueued`: rows an earlier, stopped run recorded ACCEPTED without (surely) sending them. */
  readonly recovered: string[];
  readonly skipped: Array<{ withdrawal_reference: string; state: PayoutState }>;
  /**
   * Rows whose identity is recorded with other data (a corrected amount, another account): not sent,
   * since the stored payout goes ahead as first recorded; a new reference is the way to pay the row.
   */
  readonly conflicts: Array<{ withdrawal_reference: string; state: PayoutState; differ: string[] }>;
  /** Rows recorded as ACCEPTED whose message SQS refused even after retries. */
  readonly failed: Array<{ withdrawal_reference: string; reason: string }>;
  /** Rows handled (enqueued + skipped + conflicts + failed). Fewer than the file's rows when the run was stopped. */
  handled: number;
  /** True when the signal stopped the run before every row was handled. */
  interrupted: boolean;
}

/** Thrown when DynamoDB or SQS fails outright; `report` says what was done before. */
export class EnqueueStoppedError extends Error {
  override name = 'EnqueueStoppedError';
  constructor(
    readonly report: EnqueueReport,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

async function* batchesOf(requests: Iterable<PayoutRequest> | AsyncIterable<PayoutRequest>): AsyncGenerator<PayoutRequest[]> {
  let batch: PayoutRequest[] = [];
  for await (const request of requests) {
    batch.push(request);
    if (batch.length === SEND_BATCH_SIZE) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Enqueues validated payout requests so that running it again with the same rows enqueues nothing
 * twice and completes whatever an earlier run left undone. For each row the payout is first recorded
 * with a conditional create (ACCEPTED, exactly what the worker itself records); only a row whose
 * payout was newly created is sent, plus, from the journal, a row an earlier stopped run recorded but
 * may not have sent. A row whose payout already exists otherwise is skipped and reported with its state.
 *
 * Batches of 10 run `concurrency` at a time. When `signal` aborts, no new batch starts and the ones in
 * flight finish, so a stop leaves no row recorded and unsent; a hard kill may, and the journal covers it.
 * @throws EnqueueStoppedError when DynamoDB or SQS fails outright (after the batches in flight finish).
 */
export async function enqueuePayouts(
  requests: Iterable<PayoutRequest> | AsyncIterable<PayoutRequest>,
  deps: EnqueueDeps,
  options: EnqueueOptions = {},
): Promise<EnqueueReport> {
  const now = deps.now ?? (() => new Date());
  const report: EnqueueReport = { enqueued: [], recovered: [], skipped: [], conflicts: [], failed: [], handled: 0, interrupted: false };
  const batches = batchesOf(requests);
  let failure: { error: unknown } | undefined;
  let exhausted = false;

  const handleBatch = async (batch: PayoutRequest[]): Promise<void> => {
    const keys = batch.map(identityKey);
    deps.journal?.recording(keys);
    // The creates of a batch are independent single-item conditional writes: run them together.
    const prints = await Promise.all(batch.map(async (request) => deps.fingerprints?.of(request)));
    const created = await Promise.all(batch.map((request, i) => deps.repository.createAccepted(acceptRequest(request, now(), { accountFingerprint: prints[i] }))));
    const toSend: PayoutRequest[] = [];
    const settledNow: string[] = [];
    batch.forEach((request, i) => {
      const { created: isNew, payout } = created[i] as { created: boolean; payout: Payout };
      const key = keys[i] as string;
      const differ = isNew ? [] : fieldsDifferingFromStored(payout, request, prints[i]);
      if (differ.length > 0) {
        settledNow.push(key);
        report.conflicts.push({ withdrawal_reference: request.withdrawal_reference, state: payout.state, differ });
        return;
      }
      const leftUnsent = payout.state === 'ACCEPTED' && deps.journal?.wasLeftUnsent(key) === true;
      const resend =
        leftUnsent ||
        (options.resendAccepted === true && payout.state === 'ACCEPTED') ||
        (options.resendAuthorized === true && payout.state === 'UNKNOWN' && payout.record.resubmitAuthorized === true);
      if (isNew || resend) {
        toSend.push(request);
        if (!isNew && leftUnsent) report.recovered.push(request.withdrawal_reference);
      } else {
        settledNow.push(key);
        report.skipped.push({ withdrawal_reference: request.withdrawal_reference, state: payout.state });
      }
    });
    const sent = await sendBatch(toSend, deps, report);
    deps.journal?.settled([...settledNow, ...sent.map(identityKey)]);
    report.handled += batch.length;
    deps.onProgress?.(report.handled);
  };

  const lane = async (): Promise<void> => {
    while (!failure && !deps.signal?.aborted) {
      try {
        const next = await batches.next();
        if (next.done) {
          exhausted = true;
          return;
        }
        await handleBatch(next.value);
      } catch (error) {
        // DynamoDB or SQS failed outright, or the rows could not be read: the other lanes finish their batch.
        failure ??= { error };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, deps.concurrency ?? DEFAULT_ENQUEUE_CONCURRENCY) }, lane));
  } finally {
    await batches.return(undefined);
  }
  if (failure) throw new EnqueueStoppedError(report, failure.error);
  report.interrupted = !exhausted && deps.signal?.aborted === true;
  return report;
}

/** Sends up to 10 messages, retrying the entries SQS reports as failed; returns the requests sent. */
async function sendBatch(requests: readonly PayoutRequest[], deps: EnqueueDeps, report: EnqueueReport): Promise<PayoutRequest[]> {
  const sent: PayoutRequest[] = [];
  if (requests.length === 0) return sent;
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
      const okIds = new Set((out.Successful ?? []).map((ok) => ok.Id));
      for (const p of pending) {
        if (!okIds.has(p.id)) continue;
        sent.push(p.request);
        report.enqueued.push(p.request.withdrawal_reference);
      }
      lastReason = new Map((out.Failed ?? []).map((f) => [f.Id ?? '', `${f.Code ?? 'error'}: ${f.Message ?? ''}`]));
      pending = pending.filter((p) => !okIds.has(p.id));
    } catch (error) {
      lastReason = new Map(pending.map((p) => [p.id, `${(error as Error).name}: ${(error as Error).message}`]));
    }
    if (pending.length > 0 && attempt < SEND_ATTEMPTS) await new Promise((r) => setTimeout(r, 200 * attempt));
  }
  for (const p of pending) {
    report.failed.push({ withdrawal_reference: p.request.withdrawal_reference, reason: lastReason.get(p.id) ?? 'not sent' });
  }
  return sent;
}
