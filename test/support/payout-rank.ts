import type { PayoutState } from '@shared/domain/payout';

/**
 * Forward order of the payout states, for the proofs that histories only move forward: every legal
 * move goes strictly up. The unit tests of the state machine check this against its transitions.
 */
export const PAYOUT_STATE_RANK: Readonly<Record<PayoutState, number>> = {
  ACCEPTED: 0,
  VERIFYING: 1,
  SUBMITTING: 2,
  UNKNOWN: 3,
  SUBMITTED: 4,
  NEEDS_REVIEW: 5,
  REJECTED: 6,
  FAILED: 6,
  SUCCEEDED: 6,
  REVERSED: 7,
};
