import { ConcurrentModificationError } from '@shared/domain/errors';
import type { PayoutRepository, ReversalWatchProgress } from '@shared/ports/payouts';
import { payoutKey } from '@shared/domain/identity';
import type { Payout } from '@shared/domain/payout';
import { LISTED_STATES } from '@shared/adapters/payout-item-store';

/**
 * An in-memory payout repository with the DynamoDB adapter's semantics: a create that only
 * succeeds once per identity, and single-item conditional writes on the expected state and version.
 * For property tests that need thousands of runs; the real adapter is covered against dynalite.
 */
export function memoryRepository(): PayoutRepository & { items: Map<string, Payout> } {
  const items = new Map<string, Payout>();
  let watchProgress: ReversalWatchProgress | undefined;
  return {
    items,
    async get(identity) {
      return items.get(payoutKey(identity));
    },
    async createAccepted(payout) {
      const existing = items.get(payout.key);
      if (existing) return { created: false, payout: existing };
      items.set(payout.key, payout);
      return { created: true, payout };
    },
    async save(previous, next) {
      const current = items.get(previous.key);
      if (!current || current.state !== previous.state || current.version !== previous.version) {
        throw new ConcurrentModificationError(`payout ${previous.key} moved`);
      }
      items.set(previous.key, next);
      return next;
    },
    async queryDue(now) {
      const identities = [...items.values()]
        .filter((p) => !p.isFinal && p.record.nextCheckAt !== undefined && p.record.nextCheckAt <= now.toISOString())
        .map((p) => p.record.identity);
      return { identities, scannedCount: identities.length };
    },
    async listByState(query) {
      return { payouts: [...items.values()].filter((p) => p.state === query.state).slice(0, query.limit) };
    },
    async findByReference(reference) {
      return [...items.values()].filter((p) => p.record.identity.withdrawal_reference === reference);
    },
    async markDueNow() {
      return 0;
    },
    async queryChanged(state, from, to) {
      const identities = [...items.values()]
        .filter((p) => p.state === state && p.record.updatedAt >= from.toISOString() && p.record.updatedAt < to.toISOString())
        .map((p) => p.record.identity);
      return { identities, scannedCount: identities.length };
    },
    async countInState(state) {
      // The adapter counts the by-state index, which holds UNKNOWN and the final states only.
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      return [...items.values()].filter((p) => p.state === state).length;
    },
    async oldestInState(state) {
      if (!LISTED_STATES.has(state)) throw new RangeError(`${state} is not kept in the by-state index`);
      // The index's order: by last change, then by key (a shard's ties), oldest first.
      const oldest = [...items.values()]
        .filter((p) => p.state === state)
        .sort((a, b) => a.record.updatedAt.localeCompare(b.record.updatedAt) || a.key.localeCompare(b.key))[0];
      return oldest === undefined ? undefined : { identity: oldest.record.identity, changedAt: new Date(oldest.record.updatedAt) };
    },
    async reversalWatchProgress() {
      return watchProgress;
    },
    async saveReversalWatchProgress(previous, next) {
      if (watchProgress?.version !== previous?.version) return false;
      watchProgress = { ...next, version: (previous?.version ?? 0) + 1 };
      return true;
    },
  };
}

