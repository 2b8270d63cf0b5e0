import { describe, expect, it } from 'vitest';
import { interpretResponse } from '@shared/providers/http';
import { ProviderAmbiguousError } from '@shared/providers/provider-errors';
import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '@shared/providers/retry-after';

const now = new Date('2026-03-01T12:00:00.000Z');

describe('parseRetryAfter', () => {
  it('reads delay seconds', () => {
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date as the time left until it; a date in the past is 0', () => {
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:02:00 GMT', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('caps a long wait at 15 minutes: a provider cannot park a payout for hours', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(15 * 60_000);
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Mon, 02 Mar 2026 12:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('ignores an absent or unreadable value (the caller keeps its own back-off)', () => {
    for (const value of [undefined, '', '-5', '1.5', '+3', 'soon', 'Someday, 99 Foo 2026']) {
      expect(parseRetryAfter(value, now), String(value)).toBeUndefined();
    }
  });
});

describe('Retry-After on provider errors', () => {
  const answer = (status: number, retryAfter?: string) => {
    try {
      interpretResponse({ status, text: '{"message":"slow down"}', ...(retryAfter !== undefined ? { retryAfter } : {}) }, 'payout', []);
    } catch (error) {
      return error as ProviderAmbiguousError;
    }
    throw new Error('expected a failure');
  };

  it('is carried on 429 and 503 answers', () => {
    expect(answer(429, '12').retryAfterMs).toBe(12_000);
    expect(answer(503, '3').retryAfterMs).toBe(3_000);
    expect(answer(429, '12')).toBeInstanceOf(ProviderAmbiguousError);
  });

  it('is ignored on other statuses and when absent', () => {
    expect(answer(500, '12').retryAfterMs).toBeUndefined();
    expect(answer(502, '12').retryAfterMs).toBeUndefined();
    expect(answer(429).retryAfterMs).toBeUndefined();
  });
});
