import { describe, expect, it } from 'vitest';
import {
  InvalidAccountCodeError,
  MOBILE_MONEY_PROVIDERS,
  isAccountMemberName,
  isMobileMoney,
  maskAccount,
  maskAccountsInJsonText,
  parseAccountCode,
} from '@shared/domain/account';

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

describe('maskAccountsInJsonText', () => {
  it('masks the reviewer\'s three spellings: a JSON number, an escaped name and an array', () => {
    const body = '{"a":{"account_number":1234567890},"b":{"account\\u005fnumber":"9876543210"},"c":{"accountNumber":["5555666677"]}}';
    const masked = maskAccountsInJsonText(body);
    expect(masked).toBe('{"a":{"account_number":"******7890"},"b":{"account\\u005fnumber":"******3210"},"c":{"accountNumber":["******6677"]}}');
    for (const full of ['1234567890', '9876543210', '5555666677']) expect(masked).not.toContain(full);
  });

  it('masks phone_number and phoneNumber, string or number', () => {
    expect(JSON.parse(maskAccountsInJsonText('{"phone_number":"+233244123456","phoneNumber":233244987654}'))).toEqual({
      phone_number: '*********3456',
      phoneNumber: '********7654',
    });
  });

  it('masks every string and number under an account member, in nested objects and arrays', () => {
    const body = JSON.stringify({
      data: {
        beneficiary_account: { number: '0123456789', bank: { sort: 12345678 } },
        msisdn: [['0244111222', 233244333444], { more: '0244555666' }],
        ACCOUNT_NO: [true, null, 1020304050],
      },
    });
    expect(JSON.parse(maskAccountsInJsonText(body))).toEqual({
      data: {
        beneficiary_account: { number: '******6789', bank: { sort: '****5678' } },
        msisdn: [['******1222', '********3444'], { more: '******5666' }],
        ACCOUNT_NO: [true, null, '******4050'],
      },
    });
  });

  it('masks a number by its digits as written, past the precision of a parsed number', () => {
    expect(maskAccountsInJsonText('{"card_number":5555666677778888999}')).toBe('{"card_number":"***************8999"}');
  });

  it('leaves amounts, references, dates, codes and names untouched, as written', () => {
    const body = '{ "amount": 100.50, "fee": 2500, "withdrawal_reference": "WD-2024-0001234567", "created_at": "2026-11-23T10:00:00.000Z",\n  "timestamp": 1732356000000, "account_code": "057", "account_name": "Ama Owusu", "order_id": 12345678901 }';
    expect(maskAccountsInJsonText(body)).toBe(body);
  });

  it('masks each of two members with the same name', () => {
    expect(maskAccountsInJsonText('{"phone":"0244000001","phone":"0244000002"}')).toBe('{"phone":"******0001","phone":"******0002"}');
  });

  it('masks every run of 6 digits or more of a body that is not JSON', () => {
    const body = '{"account_number":1234567890, "phone": +233244123456, ref 12345';
    expect(maskAccountsInJsonText(body)).toBe('{"account_number":******7890, "phone": *********3456, ref 12345');
    expect(maskAccountsInJsonText('')).toBe('');
    // JSON, but a bare value: no member says what it is, so masked by shape too.
    expect(maskAccountsInJsonText('"0244123456"')).toBe('"******3456"');
    expect(maskAccountsInJsonText('1234567890')).toBe('******7890');
  });

  it('does not throw on a body nested 10,000 levels deep, and masks it', () => {
    const deepArray = `${'['.repeat(10_000)}"0244123456"${']'.repeat(10_000)}`;
    const deepObject = `${'{"msisdn":'.repeat(10_000)}"0244123456"${'}'.repeat(10_000)}`;
    const unbalanced = `${'{"account_number":['.repeat(10_000)}1234567890`;
    const [array, object, cut] = [deepArray, deepObject, unbalanced].map((body) => {
      let masked = '';
      expect(() => (masked = maskAccountsInJsonText(body))).not.toThrow();
      return masked;
    });
    expect(array).toBe(deepArray);
    expect(object).not.toContain('0244123456');
    expect(object).toContain('"******3456"');
    expect(cut).not.toContain('1234567890');
  });
});

describe('isAccountMemberName', () => {
  it.each([
    'account_number', 'accountNumber', 'Account-Number', 'account no', 'account_no', 'accountNo', 'acct_no', 'acc_no', 'account_numbers',
    'iban', 'IBAN', 'nuban', 'phone', 'phone_number', 'phoneNumber', 'telephone', 'customer_phone', 'msisdn', 'mobile', 'mobile_number',
    'beneficiary_account', 'beneficiaryAccountNumber', 'bank_account', 'bankAccountNumber', 'virtual_account_number', 'card_number', 'pan', 'wallet_number',
  ])('%s is an account member', (name) => {
    expect(isAccountMemberName(name)).toBe(true);
  });

  it.each(['account', 'account_code', 'account_name', 'accountMasked', 'amount', 'company', 'withdrawal_reference', 'created_at', 'mobile_money_provider', 'phone_verified'])(
    '%s is not',
    (name) => {
      expect(isAccountMemberName(name)).toBe(false);
    },
  );
});
