import { isApprovalConfirmed, needsConfirmation, type KycSubject } from '@shared/domain/kyc-subject';
import type { KycSubjectRef } from '@shared/ports/kyc';
import type { KycApproval } from '@shared/ports/payouts';
import type { Telemetry } from '@shared/ports/runtime';
import { applyWaitingKycCallbacks, type ApplyWaitingKycDeps, type WaitingLookScope } from './apply-callback';
import { confirmKycApproval, type ConfirmKycDeps } from './confirm-kyc-approval';

/** Thrown by the approval reader when the KYC service could not be asked in time. */
export class KycConfirmationUnavailableError extends Error {
  override name = 'KycConfirmationUnavailableError';
}

export interface KycApprovalReaderOptions extends ConfirmKycDeps {
  /**
   * The KYC app the worker's users belong to (from the KYC secret, cached); `forceFetch` reads the
   * secret again, once a subject is not found under the cached id.
   */
  appId: (options?: { forceFetch?: boolean }) => Promise<string>;
  /** Upper bound on the confirming pull; the worker must not wait on a slow provider for long. */
  pullTimeoutMs?: number;
  /**
   * The stored callbacks: before any answer, the subject's callbacks stored and not yet applied are
   * applied (see applyWaitingKycCallbacks); for an approval, only those received since it.
   */
  events: ApplyWaitingKycDeps['events'];
  telemetry: Telemetry;
}

/**
 * What an approval's look reads: every stored callback of the user but the approval itself. Not only
 * those received after it: an undated rejection outranks every dated approval (kyc-subject.ts),
 * whenever it was received.
 */
function approvalScope(subject: KycSubject): WaitingLookScope {
  return { reflected: subject.lastEventId };
}

/**
 * The worker's KYC gate. Approved only when the subject's approval is confirmed by the
 * verification-status endpoint; an approval still waiting is confirmed here, by one pull bounded by
 * `pullTimeoutMs`. When that pull fails, times out, or answers "not yet" (the endpoint lags the
 * callback), the answer is neither approved nor "not approved" (which would reject the payout for
 * good): it throws KycConfirmationUnavailableError so the worker retries the message later. A pull
 * that contradicts the approval (rejected) is "not approved".
 *
 * Callbacks are applied after their 200 (store-and-ack), so the subject may lag what is stored: before
 * answering, the subject's stored callbacks not yet applied are applied here, through the applier's
 * use case, and the subject decided again. An approval's look reads every listed callback of the user
 * but the approval itself (one Query and a read per callback, up to 50 recognized ones; unrecognized ones are passed over, at most 20 pages in all, an incomplete look being a failed one), so a rejection stored
 * while the applier fails still stops the payout. A refusal looks at them all. When the look fails, the answer is "not yet"
 * (KycConfirmationUnavailableError), never approved and never a refusal.
 */
export function createKycApprovalReader(options: KycApprovalReaderOptions): KycApproval {
  const timeoutMs = options.pullTimeoutMs ?? 3000;

  /** The subject and the app it was found under (the cached app id, or a fresh read when not found there). */
  async function findSubject(userReference: string): Promise<{ ref: KycSubjectRef; subject: KycSubject | undefined }> {
    let ref = { appId: await options.appId(), userReference };
    let subject = await options.subjects.getSubject(ref);
    if (subject === undefined) {
      // The KYC app may have changed a moment ago (`payrelay secrets put kyc`) while the cache still
      // holds the old id: one fresh read before "not approved" rejects the payout for good.
      const appId = await options.appId({ forceFetch: true });
      if (appId !== ref.appId) {
        ref = { appId, userReference };
        subject = await options.subjects.getSubject(ref);
      }
    }
    return { ref, subject };
  }

  /** The answer the subject as stored gives, confirming a waiting approval by one bounded pull. */
  async function decide(ref: KycSubjectRef, subject: KycSubject | undefined): Promise<'approved' | 'not_approved'> {
    if (subject === undefined) return 'not_approved';
    if (isApprovalConfirmed(subject)) return 'approved';
    if (!needsConfirmation(subject)) return 'not_approved';
    let timer: NodeJS.Timeout | undefined;
    try {
      const confirmed = await Promise.race([
        confirmKycApproval(options, ref),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new KycConfirmationUnavailableError(`KYC confirmation took over ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      if (confirmed !== undefined && isApprovalConfirmed(confirmed)) return 'approved';
      if (confirmed !== undefined && needsConfirmation(confirmed) && confirmed.lastPull?.outcome === 'not_yet') {
        // The callback said approved and the status endpoint has not caught up: a wait, not a refusal.
        throw new KycConfirmationUnavailableError('the KYC service has not confirmed the approval yet');
      }
      return 'not_approved';
    } catch (error) {
      if (error instanceof KycConfirmationUnavailableError) throw error;
      throw new KycConfirmationUnavailableError(`KYC confirmation failed: ${(error as Error).name}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Applies the subject's waiting callbacks in `scope`; how many. A failed look is a wait, never an answer. */
  async function applyWaiting(ref: KycSubjectRef, scope: WaitingLookScope): Promise<number> {
    try {
      return await applyWaitingKycCallbacks(options, ref, scope);
    } catch (error) {
      throw new KycConfirmationUnavailableError(`stored KYC callbacks could not be applied: ${(error as Error).name}`);
    }
  }

  return {
    async check(userReference) {
      const { ref, subject } = await findSubject(userReference);
      const decision = await decide(ref, subject);
      if ((await applyWaiting(ref, decision === 'approved' && subject ? approvalScope(subject) : {})) === 0) return decision;
      return decide(ref, await options.subjects.getSubject(ref));
    },
  };
}
