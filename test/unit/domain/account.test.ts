import { describe, expect, it } from 'vitest';
import { InvalidAccountCodeError, MOBILE_MONEY_PROVIDERS, isMobileMoney, maskAccount, parseAccountCode } from '@shared/domain/account';

describe('parseAccountCode', () => {
  it('keeps digit bank codes with their leading zeros', () => {
    expect(parseAccountCode('057')).toBe('057');
    expect(parseAccountCode('000013')).toBe('000013');
    expect(isMobileMoney(parseAccountCode('057'))).toBe(false);
  });

  it('accepts the documented providers, case-insensitively, in their documented spelling', () => {
    expect(MOBILE_MONEY_PROVIDERS).toEqual(['Momo', 'MPESA', 'MTN', 'VOD']);
    expect(parseAccountCode('Momo')).toBe('Momo');
    expect(parseAccountCode('momo')).toBe('Momo');
    expect(parseAccountCode('mpesa')).toBe('MPESA');
    expect(isMobileMoney(parseAccountCode('MTN'))).toBe(true);
  });

  it.each(['', '5', '05a', ' 057', 'AIRTEL', '12345678901', 'MTN '])('rejects %j', (code) => {
    expect(() => parseAccountCode(code)).toThrow(InvalidAccountCodeError);
  });
});

describe('maskAccount', () => {
  it('shows only the last 4 characters and keeps the length', () => {
    expect(maskAccount('0241234567')).toBe('******4567');
    expect(maskAccount('+233241234567')).toBe('*********4567');
    expect(maskAccount('12345')).toBe('*2345');
  });

  it('masks short values entirely', () => {
    expect(maskAccount('1234')).toBe('****');
    expect(maskAccount('12')).toBe('**');
    expect(maskAccount('')).toBe('');
  });

  it('never contains the full number', () => {
    for (const account of ['0123456789', '5555555555555555', '233200000001']) {
      expect(maskAccount(account)).not.toContain(account.slice(0, -4));
    }
  });
});
