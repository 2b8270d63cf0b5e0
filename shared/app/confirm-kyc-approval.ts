import { isApprovalConfirmed, needsConfirmation, recordPull, type KycSubject } from '@shared/domain/kyc-subject';
import type { Clock, Log } from '@shared/ports/runtime';
import type { KycSubjectRef, KycSubjectStore, KycVerification } from '@shared/ports/kyc';

/** What confirming needs: the subjects, the KYC service's status endpoint, a clock and a log. */
export interface ConfirmKycDeps {
  subjects: KycSubjectStore;
  verifier: KycVerification;
  clock: Clock;
  log: Log;
}

const MAX_WRITE_ATTEMPTS = 3;

/**
 * Pulls the verification status of one subject whose approval is not confirmed yet and records the
 * answer. Returns the subject as stored afterwards (unchanged when nothing needed confirming).
 * Provider failures propagate: the caller decides whether "could not ask" means retry or wait.
 */
export async function confirmKycApproval(deps: ConfirmKycDeps, ref: KycSubjectRef): Promise<KycSubject | undefined> {
  let subject = await deps.subjects.getSubject(ref);
  if (subject === undefined || !needsConfirmation(subject)) return subject;
  const answer = await deps.verifier.verificationStatus(ref);
  for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt += 1) {
    // The answer describes the provider's current state, so it stays valid for a re-read subject.
    const next = recordPull(subject, answer.decision, answer.providerStatus, deps.clock.now());
    if (await deps.subjects.saveSubject(next)) {
      const logKeys = { userReference: ref.userReference, providerStatus: answer.providerStatus, outcome: next.lastPull?.outcome };
      if (next.lastPull?.outcome === 'contradicted') {
        deps.log.warn('KYC approval contradicted by the verification-status endpoint; not approved', logKeys);
      } else {
        deps.log.info('KYC verification status pulled', logKeys);
      }
      return { ...next, version: next.version + 1 };
    }
    subject = await deps.subjects.getSubject(ref);
    if (subject === undefined || !needsConfirmation(subject)) return subject;
  }
  // Lost every race to new callbacks; the next pull (reader or sweep) will try again.
  return subject;
}

/** Counts of one confirmation sweep. */
export interface ConfirmSweepResult {
  checked: number;
  confirmed: number;
  notYet: number;
  contradicted: number;
  failed: number;
}

/**
 * Confirms waiting approvals from the sparse `unconfirmed-approvals` index, oldest first. The
 * reconciler's schedule or the CLI runs it; a provider failure on one subject is logged and the
 * sweep goes on.
 */
export async function confirmPendingApprovals(deps: ConfirmKycDeps, options: { limit?: number } = {}): Promise<ConfirmSweepResult> {
  const result: ConfirmSweepResult = { checked: 0, confirmed: 0, notYet: 0, contradicted: 0, failed: 0 };
  for (const ref of await deps.subjects.unconfirmedApprovals(options.limit ?? 100)) {
    result.checked += 1;
    try {
      const subject = await confirmKycApproval(deps, ref);
      if (subject !== undefined && isApprovalConfirmed(subject)) result.confirmed += 1;
      else if (subject?.lastPull?.outcome === 'contradicted') result.contradicted += 1;
      else result.notYet += 1;
    } catch (error) {
      result.failed += 1;
      deps.log.warn('KYC verification status could not be pulled', {
        userReference: ref.userReference,
        error: (error as Error).name,
        reason: (error as Error).message,
      });
    }
  }
  return result;
}
