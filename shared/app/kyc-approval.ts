import { isApprovalConfirmed, needsConfirmation } from '@shared/domain/kyc-subject';
import type { KycApproval } from '@shared/ports/payouts';
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
}

/**
 * The worker's KYC gate. Approved only when the subject's approval is confirmed by the
 * verification-status endpoint; an approval still waiting is confirmed here, by one pull bounded by
 * `pullTimeoutMs`. When that pull fails, times out, or answers "not yet" (the endpoint lags the
 * callback), the answer is neither approved nor "not approved" (which would reject the payout for
 * good): it throws KycConfirmationUnavailableError so the worker retries the message later. A pull
 * that contradicts the approval (rejected) is "not approved".
 */
export function createKycApprovalReader(options: KycApprovalReaderOptions): KycApproval {
  const timeoutMs = options.pullTimeoutMs ?? 3000;
  return {
    async check(userReference) {
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
    },
  };
}
