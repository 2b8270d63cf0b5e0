import { describe, expect, it } from 'vitest';
import { InvalidPayoutIdentityError, isWellFormedText, parsePayoutKey, payoutKey } from '@shared/domain/identity';

describe('payoutKey', () => {
  it('is stable and round-trips', () => {
    const id = { platform_merchant_id: 'pm-1', currency: 'GHS', withdrawal_reference: 'wd-001' };
    expect(payoutKey(id)).toBe('pm-1|GHS|wd-001');
    expect(payoutKey({ ...id })).toBe(payoutKey(id));
    expect(parsePayoutKey(payoutKey(id))).toEqual(id);
  });

  it('is unambiguous when parts contain the separator or escapes', () => {
    const a = { platform_merchant_id: 'a|b', currency: 'GHS', withdrawal_reference: 'c' };
    const b = { platform_merchant_id: 'a', currency: 'b|GHS', withdrawal_reference: 'c' };
    expect(payoutKey(a)).not.toBe(payoutKey(b));
    expect(parsePayoutKey(payoutKey(a))).toEqual(a);
    const odd = { platform_merchant_id: '100%', currency: 'NGN', withdrawal_reference: 'ré f/ü' };
    expect(parsePayoutKey(payoutKey(odd))).toEqual(odd);
  });

  it('rejects empty parts', () => {
    expect(() => payoutKey({ platform_merchant_id: '', currency: 'GHS', withdrawal_reference: 'x' })).toThrow(
      InvalidPayoutIdentityError,
    );
  });

  it.each(['a|b', 'a|b|c|d', 'a|GHS|%E0%A4%A', 'a|GHS|%41', '|GHS|x'])('rejects the non-canonical key %j', (key) => {
    expect(() => parsePayoutKey(key)).toThrow(InvalidPayoutIdentityError);
  });
});

describe('references that cannot make a key', () => {
  it('tells well-formed text from text with a lone surrogate', () => {
    expect(isWellFormedText('ref-1 中 😀')).toBe(true);
    expect(isWellFormedText('ref-\uD800')).toBe(false);
    expect(isWellFormedText('\uDC00ref')).toBe(false);
    expect(isWellFormedText('\uDE00\uD83D')).toBe(false);
  });

  it('refuses a lone surrogate with a named error, never a URIError', () => {
    expect(() => payoutKey({ platform_merchant_id: 'm', currency: 'GHS', withdrawal_reference: 'r\uD800' })).toThrow(
      InvalidPayoutIdentityError,
    );
  });

  it('refuses an identity whose encoded key would pass DynamoDB\'s 2048-byte limit', () => {
    const long = '中'.repeat(128);
    expect(() => payoutKey({ platform_merchant_id: long, currency: 'GHS', withdrawal_reference: long })).toThrow(/too long for a key/);
    expect(payoutKey({ platform_merchant_id: long, currency: 'GHS', withdrawal_reference: 'r' }).length).toBeLessThanOrEqual(2048);
  });
});
