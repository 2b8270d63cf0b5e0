/**
 * Runs tasks so that tasks with the same key never overlap (they run in submission order) and at
 * most `limit` run at once overall. The worker uses one per batch, keyed by payout identity.
 */
export function createKeyedLimiter(limit: number): { run<T>(key: string, task: () => Promise<T>): Promise<T> } {
  const tails = new Map<string, Promise<void>>();
  const waiting: Array<() => void> = [];
  let active = 0;
  const acquire = (): Promise<void> => {
    if (active < limit) {
      active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };
  return {
    run(key, task) {
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(async () => {
        await acquire();
        try {
          return await task();
        } finally {
          release();
        }
      });
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
