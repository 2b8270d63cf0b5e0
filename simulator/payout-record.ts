import type { AccountCode } from '@shared/domain/account';
import type { PayoutIdentity } from '@shared/domain/identity';

/** 'reversed': delivered, then the money came back (admin reversePayout). */
export type PayoutState = 'pending' | 'succeeded' | 'failed' | 'reversed';

/** A payout the simulated service executed (money moved), as its ledger, GetPayout and notifications see it. */
export interface PayoutRecord {
  identity: PayoutIdentity;
  partner_code: string;
  amount: string;
  account_number: string;
  account_code: AccountCode;
  account_name: string;
  state: PayoutState;
  outcome: 'succeeded' | 'failed';
  createdMs: number;
  created_at: string;
  updated_at: string;
  checks: number;
  settleAfterMs: number;
  settleAfterChecks: number;
  /** GetPayout has answered with this record at least once (the flap fault forgets only shown payouts). */
  shown: boolean;
}
