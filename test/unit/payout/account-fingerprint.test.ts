import { describe, expect, it } from 'vitest';
import { accountFingerprint } from '@shared/adapters/account-fingerprint';
import { mayBeSameAccount } from '@shared/domain/account';

const KEY = 'unit-test-account-key-0123456789abcdef0123456789';
const account = { account_code: 'MTN', account_number: '0244123456' };

describe('account fingerprint', () => {
  it('is a 4-character key id and 16 base64url characters, the same for the same account and key', () => {
    const fingerprint = accountFingerprint(KEY, account);
    expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{4}\.[A-Za-z0-9_-]{16}$/);
    expect(accountFingerprint(KEY, { account_code: 'VOD', account_number: '1' }).slice(0, 5)).toBe(fingerprint.slice(0, 5));
    expect(accountFingerprint(KEY, { ...account })).toBe(fingerprint);
  });

  it('differs for another number with the same mask, another code, or another key', () => {
    const fingerprint = accountFingerprint(KEY, account);
    expect(accountFingerprint(KEY, { ...account, account_number: '0555123456' })).not.toBe(fingerprint);
    expect(accountFingerprint(KEY, { ...account, account_code: 'VOD' })).not.toBe(fingerprint);
    expect(accountFingerprint(`${KEY}x`, account)).not.toBe(fingerprint);
  });

  it('keeps the code and the number apart (no two accounts share one input)', () => {
    expect(accountFingerprint(KEY, { account_code: '05', account_number: '71234' })).not.toBe(accountFingerprint(KEY, { account_code: '057', account_number: '1234' }));
  });
});

describe('mayBeSameAccount', () => {
  const kept = { masked: '******3456', fingerprint: accountFingerprint(KEY, account) };
  const other = { masked: '******3456', fingerprint: accountFingerprint(KEY, { ...account, account_number: '0555123456' }) };

  it('tells apart two accounts with the same mask by their fingerprints under one key', () => {
    expect(mayBeSameAccount(kept, { ...kept })).toBe(true);
    expect(mayBeSameAccount(kept, other)).toBe(false);
    expect(mayBeSameAccount(kept, { ...kept, masked: '******9999' })).toBe(false);
  });

  it('falls back to the mask without a fingerprint, or under another key (a key replaced by mistake)', () => {
    expect(mayBeSameAccount({ masked: kept.masked }, other)).toBe(true);
    expect(mayBeSameAccount(kept, { masked: kept.masked })).toBe(true);
    expect(mayBeSameAccount(kept, { masked: kept.masked, fingerprint: accountFingerprint(`${KEY}-new`, { ...account, account_number: '0555123456' }) })).toBe(true);
  });
});
