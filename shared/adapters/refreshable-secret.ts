import type { Clock } from '@shared/ports/runtime';
import type { RefreshableSecret, SecretSource } from '@shared/ports/secrets';

/**
 * Wraps a cached secret so a mismatch can re-read it (keys may just have been reset or rotated)
 * without letting a stream of forged callbacks turn into a stream of Secrets Manager calls.
 */
export function refreshable<T>(source: SecretSource<T>, clock: Clock, minIntervalMs = 30_000): RefreshableSecret<T> {
  let lastRefresh = Number.NEGATIVE_INFINITY;
  return {
    get: () => source.get(),
    async refresh() {
      const now = clock.now().getTime();
      if (now - lastRefresh < minIntervalMs) return undefined;
      lastRefresh = now;
      return source.get({ forceFetch: true });
    },
  };
}
