import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';

/** Per payout identity: how often Payout was asked for and how often it actually executed. */
interface LedgerCounts {
  identity: PayoutIdentity;
  calls: number;
  attempts: number;
  executions: number;
  duplicates: number;
}

/** One row of the ledger: the proof of "paid at most once". */
export interface LedgerEntry extends PayoutIdentity {
  /** Payouts committed (money moved) for this identity: must never exceed 1. */
  executions: number;
  /** Every Payout HTTP request that named this identity, whatever happened to it (faults included). */
  calls: number;
  /** Authenticated, signed Payout requests for this identity, including refused ones. */
  attempts: number;
  /** Requests answered by the duplicate rule (refused or answered with the existing payout). */
  duplicates: number;
  /** Current provider status word (PENDING, COMPLETED, FAILED), or NOT_CREATED when never committed. */
  status: string;
  amount?: string;
}

/** What the ledger shows of an executed payout: its status word and amount. */
export type ExecutedPayout = (identity: PayoutIdentity) => { status: string; amount: string } | undefined;

/**
 * The payout service's ledger: every Payout request counted per identity (calls, authenticated
 * attempts, duplicates, executions), the evidence the chaos runs and the tests check "paid at most
 * once" against.
 */
export class Ledger {
  private readonly counts = new Map<string, LedgerCounts>();

  constructor(private readonly executed: ExecutedPayout) {}

  /** The counters of one identity, created at zero on first use. */
  countsFor(identity: PayoutIdentity): LedgerCounts {
    const key = payoutKey(identity);
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { identity, calls: 0, attempts: 0, executions: 0, duplicates: 0 };
      this.counts.set(key, entry);
    }
    return entry;
  }

  /**
   * Counts one Payout HTTP request, before any fault or check: the proof of "at most one Payout
   * call per reference" counts calls, not only executions.
   */
  recordCall(body: Record<string, unknown>): void {
    const { platform_merchant_id, currency, withdrawal_reference } = body;
    if (typeof platform_merchant_id !== 'string' || typeof currency !== 'string' || typeof withdrawal_reference !== 'string') return;
    this.countsFor({ platform_merchant_id, currency, withdrawal_reference }).calls += 1;
  }

  /** The ledger row of one identity. */
  entry(identity: PayoutIdentity): LedgerEntry {
    const counts = this.countsFor(identity);
    const payout = this.executed(counts.identity);
    return {
      ...counts.identity,
      executions: counts.executions,
      calls: counts.calls,
      attempts: counts.attempts,
      duplicates: counts.duplicates,
      status: payout ? payout.status : 'NOT_CREATED',
      ...(payout ? { amount: payout.amount } : {}),
    };
  }

  /** Every payout identity seen by Payout, oldest first. */
  entries(): LedgerEntry[] {
    return [...this.counts.values()].map((c) => this.entry(c.identity));
  }

  clear(): void {
    this.counts.clear();
  }
}
