import { describe, expect, it } from 'vitest';
import { InvalidPayoutRequestError, parsePayoutRequest, type PayoutRequestInput } from '@shared/messages/payout-request';

const valid: PayoutRequestInput = {
  version: 1,
  platform_merchant_id: 'm-1',
  currency: 'GHS',
  withdrawal_reference: 'w-1',
  amount: '10',
  account_number: '0241234567',
  account_code: 'mtn',
};

const parse = (body: unknown): ReturnType<typeof parsePayoutRequest> => parsePayoutRequest(JSON.stringify(body));

describe('payout request message', () => {
  it('accepts a valid message and canonicalizes amount and account code', () => {
    const r = parse({ ...valid, expected_name: 'Ama Owusu', user_reference: 'u-1', metadata: { batch: '7' } });
    expect(r.amount).toBe('10.00');
    expect(r.account_code).toBe('MTN');
    expect(r.metadata).toEqual({ batch: '7' });
  });

  it('rejects a float-looking amount beyond the currency precision, saying so once, in words', () => {
    expect(() => parse({ ...valid, amount: '10.001' })).toThrow(InvalidPayoutRequestError);
    const error = (() => {
      try {
        return parse({ ...valid, amount: '10.001' });
      } catch (e) {
        return e as InvalidPayoutRequestError;
      }
    })() as InvalidPayoutRequestError;
    expect([error.message, error.problems]).toEqual([
      'invalid payout request: amount "10.001" has more than 2 decimals for GHS',
      'amount "10.001" has more than 2 decimals for GHS',
    ]);
  });

  it('carries the identity when it is readable, and names fields without echoing the account number', () => {
    try {
      parse({ ...valid, account_number: '02412x4567' });
      expect.unreachable();
    } catch (error) {
      const e = error as InvalidPayoutRequestError;
      expect(e).toBeInstanceOf(InvalidPayoutRequestError);
      expect(e.identity).toEqual({ platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'w-1' });
      expect(e.message).toContain('account_number');
      expect(e.message).not.toContain('02412x4567');
    }
  });

  it('has no identity for a body that is not JSON or lacks one', () => {
    expect(() => parsePayoutRequest('{oops')).toThrow(/not JSON/);
    try {
      parse({ amount: '1' });
    } catch (error) {
      expect((error as InvalidPayoutRequestError).identity).toBeUndefined();
    }
  });

  it('requires version 1 and refuses unknown fields', () => {
    expect(() => parse({ ...valid, version: 2 })).toThrow(/version/);
    expect(() => parse({ ...valid, surprise: true })).toThrow('invalid payout request: surprise: not a field of a payout request');
    expect(() => parse({ ...valid, amount: 10 })).toThrow(/amount/);
    expect(() => parse({ ...valid, account_code: 'BANKX' })).toThrow(InvalidPayoutRequestError);
  });
});
