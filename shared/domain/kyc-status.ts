/** Phase of a KYC order, from the callback `status` word. */
export type KycPhase = 'initiated' | 'pending' | 'completed';

/** Review decision, from `meta_data.kyc_status`. */
export type KycDecision = 'awaiting_approval' | 'approved' | 'rejected';

// The KYC service documents initialized, started, pending and completed; its sample payloads use init,
// pending and completed. Every spelling seen is accepted.
const PHASES: Record<string, KycPhase> = {
  init: 'initiated',
  initialized: 'initiated',
  initialised: 'initiated',
  initiated: 'initiated',
  started: 'initiated',
  pending: 'pending',
  completed: 'completed',
  complete: 'completed',
};

const DECISIONS: Record<string, KycDecision> = {
  awaiting_approval: 'awaiting_approval',
  approved: 'approved',
  rejected: 'rejected',
};

function lookup<T>(table: Record<string, T>, word: unknown): T | undefined {
  if (typeof word !== 'string') {
    return undefined;
  }
  const key = word.trim().toLowerCase().replace(/[\s-]+/g, '_');
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Normalizes a KYC status word (case-insensitive); undefined for a word the service never documented. */
export function normalizeKycPhase(word: string): KycPhase | undefined {
  return lookup(PHASES, word);
}

/** Normalizes a kyc_status word (case-insensitive; "awaiting approval" also accepted); undefined when unknown. */
export function normalizeKycDecision(word: string): KycDecision | undefined {
  return lookup(DECISIONS, word);
}
