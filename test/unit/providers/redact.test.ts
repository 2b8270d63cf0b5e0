import { describe, expect, it } from 'vitest';
import { redact } from '@shared/providers/provider-errors';

describe('redact', () => {
  it('hides keys and masks account numbers', () => {
    const text = redact('key sk_live_abc rejected for 0241234567 and 233201111111', ['sk_live_abc', '0241234567']);
    expect(text).toBe('key [redacted] rejected for ******4567 and ********1111');
  });

  it('shortens long provider text', () => {
    expect(redact('x'.repeat(1000))).toHaveLength(301);
  });

  it('leaves short numbers (amounts, codes) readable', () => {
    expect(redact('amount 150.00 bank 057 code 123456')).toBe('amount 150.00 bank 057 code 123456');
  });
});
