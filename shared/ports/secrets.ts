/*
 * Secrets as the use cases read them. Type-only; shared/adapters/secrets.ts caches Secrets Manager
 * values and shared/adapters/refreshable-secret.ts adds the rate-limited re-read.
 */

/** A cached secret as @shared/adapters/secrets returns it. */
export interface SecretSource<T> {
  get(options?: { forceFetch?: boolean }): Promise<T>;
}

/** A secret that may be re-read once after a mismatch, at most once per interval. */
export interface RefreshableSecret<T> {
  get(): Promise<T>;
  /** A fresh read, or undefined when one was made less than the interval ago. */
  refresh(): Promise<T | undefined>;
}

/** The value a secret had before its last rotation, with the time it was replaced (none: never rotated). */
export interface PreviousSecret<T> {
  get(): Promise<{ value: T; replacedAt: Date } | undefined>;
}
