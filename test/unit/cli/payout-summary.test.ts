import { afterEach, describe, expect, it, vi } from 'vitest';
import { payoutSummary } from '@cli/commands/payouts';
import { printRecord } from '@cli/output';
import { Payout } from '@shared/domain/payout';
import { payoutInState } from '@test/factories/ports';

afterEach(() => vi.restoreAllMocks());

const identity = { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'WD-1' };
const now = new Date('2026-11-20T10:00:00.000Z');

/** The value cell of one field as `payouts status` prints it. */
function cellOf(payout: Payout, field: string): string | undefined {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  printRecord(payoutSummary(payout));
  const table = log.mock.calls.map((call) => String(call[0])).join('\n');
  const row = table.split('\n').find((line) => line.includes(` ${field} `));
  return row?.split('│').map((cell) => cell.trim()).filter((cell) => cell !== '')[1];
}

describe('payouts status of a payout recorded without amount and account (an invalid request)', () => {
  // As createRejectInvalidRequest records it: the amount and account of an invalid message are not trusted.
  const invalid = Payout.accept({ identity, amount: '', accountMasked: '', accountCode: '' }, now).reject('invalid payout request: amount: must be a decimal', now);

  it('shows "-" for the account as for the amount, and --json leaves both out', () => {
    expect(cellOf(invalid, 'amount')).toBe('-');
    expect(cellOf(invalid, 'account')).toBe('-');
    const summary = payoutSummary(invalid);
    expect(summary.amount).toBeUndefined();
    expect(summary.account).toBeUndefined();
  });

  it('shows the account code and masked number of any other payout', () => {
    expect(payoutSummary(payoutInState('SUBMITTED', identity, now))).toMatchObject({ amount: '10.00', account: 'MTN ******3456' });
  });
});
