import { describe, expect, it } from 'vitest';
import { matchingAll, pickOne } from '@cli/operator';
import { Payout } from '@shared/domain/payout';
import { EXIT } from '@cli/output';

const t0 = new Date('2026-11-24T10:00:00.000Z');
const payout = (merchant: string, currency: string) =>
  Payout.accept({ identity: { platform_merchant_id: merchant, currency, withdrawal_reference: 'WD-1' }, amount: '1.00', accountMasked: '******3456', accountCode: 'MTN' }, t0);

describe('pickOne', () => {
  it('picks the one payout the options name', () => {
    const found = [payout('m-1', 'GHS'), payout('m-1', 'NGN')];
    expect(pickOne('WD-1', found, { currency: 'NGN' }).record.identity.currency).toBe('NGN');
  });

  it('says which filter left nothing, and that payouts exist without it', () => {
    expect(() => pickOne('WD-1', [payout('m-1', 'GHS')], { currency: 'XYZ' })).toThrow(
      expect.objectContaining({ message: 'no payout with withdrawal_reference WD-1 for currency XYZ (1 with other currencies)', exitCode: EXIT.notFound }),
    );
    expect(() => pickOne('WD-1', [], {})).toThrow('no payout with withdrawal_reference WD-1');
  });

  it('asks for --merchant and --currency when several match', () => {
    expect(() => pickOne('WD-1', [payout('m-1', 'GHS'), payout('m-2', 'GHS')], {})).toThrow(/2 payouts have withdrawal_reference WD-1 \(m-1\/GHS, m-2\/GHS\): pick one/);
  });

  it('matchingAll keeps every payout the options leave (payouts status shows them all), with the same refusal for none', () => {
    const found = [payout('m-1', 'GHS'), payout('m-2', 'GHS'), payout('m-1', 'NGN')];
    expect(matchingAll('WD-1', found, { currency: 'GHS' })).toHaveLength(2);
    expect(() => matchingAll('WD-1', found, { merchant: 'm-3' })).toThrow('no payout with withdrawal_reference WD-1 for merchant m-3 (3 with other merchants)');
  });
});
