import { describe, expect, it } from 'vitest';
import { createKeyedLimiter } from '@shared/app/keyed-limiter';
import { withCredentialRefresh } from '@shared/app/credential-refresh';
import { mapLimited } from '@shared/app/reconcile-payouts';
import type { CredentialsSource, ProviderCredentials } from '@shared/ports/payouts';
import { ProviderUnauthorizedError } from '@shared/providers/provider-errors';

const tick = (ms = 5): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('keyed limiter (records of one identity never run at once)', () => {
  it('serializes tasks of one key in order and bounds overall concurrency', async () => {
    const limiter = createKeyedLimiter(2);
    let active = 0;
    let peak = 0;
    const perKeyActive = new Map<string, number>();
    const order: string[] = [];
    const task = (key: string, label: string) => async () => {
      active += 1;
      peak = Math.max(peak, active);
      perKeyActive.set(key, (perKeyActive.get(key) ?? 0) + 1);
      expect(perKeyActive.get(key)).toBe(1);
      await tick();
      order.push(label);
      perKeyActive.set(key, (perKeyActive.get(key) ?? 0) - 1);
      active -= 1;
      return label;
    };
    const jobs = [
      limiter.run('a', task('a', 'a1')),
      limiter.run('b', task('b', 'b1')),
      limiter.run('a', task('a', 'a2')),
      limiter.run('c', task('c', 'c1')),
      limiter.run('a', task('a', 'a3')),
      limiter.run('d', task('d', 'd1')),
    ];
    expect(await Promise.all(jobs)).toEqual(['a1', 'b1', 'a2', 'c1', 'a3', 'd1']);
    expect(peak).toBe(2);
    expect(order.filter((l) => l.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
  });

  it('keeps going after a failed task of the same key', async () => {
    const limiter = createKeyedLimiter(1);
    const failed = limiter.run('k', async () => {
      throw new Error('boom');
    });
    const next = limiter.run('k', async () => 'ok');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ok');
  });

  it('mapLimited visits every item with at most `limit` in flight', async () => {
    let active = 0;
    let peak = 0;
    const seen: number[] = [];
    await mapLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      active += 1;
      peak = Math.max(peak, active);
      await tick();
      seen.push(n);
      active -= 1;
    });
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(peak).toBe(3);
  });
});

describe('credential refresh on 401', () => {
  const creds = (key: string): ProviderCredentials => ({
    partnerPublicKey: key,
    partnerSecretKey: 's',
    merchantSecretKey: 'm',
    partnerId: 'p',
    platformMerchantId: 'x',
  });

  function source(keys: string[]): CredentialsSource & { forced: number } {
    let i = 0;
    return {
      forced: 0,
      async get(options) {
        if (options?.forceFetch) {
          this.forced += 1;
          i += 1;
        }
        return creds(keys[Math.min(i, keys.length - 1)] ?? 'none');
      },
    };
  }
  const unauthorized = () => new ProviderUnauthorizedError('payout', 'HTTP 401');

  it('fetches the secret again once and retries with the new keys', async () => {
    const src = source(['old', 'new']);
    const used: string[] = [];
    const result = await withCredentialRefresh(src, async (c) => {
      used.push(c.partnerPublicKey);
      if (c.partnerPublicKey === 'old') throw unauthorized();
      return 'paid';
    });
    expect(result).toBe('paid');
    expect(used).toEqual(['old', 'new']);
    expect(src.forced).toBe(1);
  });

  it('gives up after one refresh, so a wrong secret cannot loop', async () => {
    const src = source(['old', 'still-old']);
    let calls = 0;
    await expect(
      withCredentialRefresh(src, async () => {
        calls += 1;
        throw unauthorized();
      }),
    ).rejects.toBeInstanceOf(ProviderUnauthorizedError);
    expect(calls).toBe(2);
    expect(src.forced).toBe(1);
  });

  it('calls at once with the credentials the caller has just read, and still refreshes once on a 401', async () => {
    const src = source(['new']);
    const used: string[] = [];
    let called = false;
    const result = withCredentialRefresh(
      src,
      async (c) => {
        called = true;
        used.push(c.partnerPublicKey);
        if (c.partnerPublicKey === 'old') throw unauthorized();
        return 'paid';
      },
      creds('old'),
    );
    // No read of the source before the first call: it started synchronously.
    expect(called).toBe(true);
    expect(await result).toBe('paid');
    expect(used).toEqual(['old', 'new']);
    expect(src.forced).toBe(1);
  });

  it('does not refresh on other failures', async () => {
    const src = source(['k']);
    await expect(withCredentialRefresh(src, async () => Promise.reject(new Error('other')))).rejects.toThrow('other');
    expect(src.forced).toBe(0);
  });
});
