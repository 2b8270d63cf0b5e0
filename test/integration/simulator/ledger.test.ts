import { describe, expect, it } from 'vitest';
import { ProviderRejectedError } from '@shared/providers/provider-errors';
import type { DuplicateRule } from '@simulator/index';
import { ghsPayout, payoutFixture, simulatorPerTest } from './support';

const { start } = simulatorPerTest();

const UNIQUE = 120;
const DUPLICATES = 80;

/** 200 payouts fired at once: 120 references, 80 of which are sent twice, interleaved. */
function requests(): string[] {
  const refs = Array.from({ length: UNIQUE }, (_, i) => `conc-${i}`);
  const dups = refs.slice(0, DUPLICATES);
  return refs.flatMap((ref, i) => (i < DUPLICATES ? [ref, dups[i] as string] : [ref]));
}

describe('ledger under concurrency', () => {
  it.each<DuplicateRule>(['refuse', 'return-existing'])(
    'counts exactly one execution per reference for 200 concurrent payouts with duplicates (%s)',
    async (duplicateRule) => {
      const sim = await start({ duplicateRule, faults: { payout: { latencyMs: 20 } } });
      const { client, creds } = payoutFixture(sim, { timeoutMs: 10_000 });
      try {
        const sent = requests();
        expect(sent).toHaveLength(UNIQUE + DUPLICATES);
        const results = await Promise.allSettled(sent.map((ref) => client.payout(ghsPayout(ref), creds)));

        const accepted = results.filter((r) => r.status === 'fulfilled').length;
        const refused = results.filter((r) => r.status === 'rejected');
        if (duplicateRule === 'refuse') {
          expect(accepted).toBe(UNIQUE);
          expect(refused).toHaveLength(DUPLICATES);
          for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ duplicateReference: true });
          expect(refused.every((r) => (r as PromiseRejectedResult).reason instanceof ProviderRejectedError)).toBe(true);
        } else {
          expect(accepted).toBe(UNIQUE + DUPLICATES);
        }

        const ledger = sim.admin.ledger();
        expect(ledger).toHaveLength(UNIQUE);
        expect(ledger.every((e) => e.executions === 1)).toBe(true);
        expect(ledger.reduce((n, e) => n + e.attempts, 0)).toBe(UNIQUE + DUPLICATES);
        expect(ledger.reduce((n, e) => n + e.duplicates, 0)).toBe(DUPLICATES);
        expect(new Set(ledger.map((e) => e.withdrawal_reference))).toEqual(new Set(sent));
      } finally {
        client.close();
      }
    },
  );
});
