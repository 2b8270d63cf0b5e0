import type { CredentialsSource, ProviderCredentials } from '@shared/ports/payouts';
import { ProviderUnauthorizedError } from '@shared/providers/provider-errors';

/**
 * Calls the provider with cached credentials; on a 401 fetches the secret again, once, and retries once.
 * @param current credentials the caller has just read from `credentials`: the call then starts in the
 *   same turn of the event loop, not after another read of the cache (the worker's provider calls are
 *   on its critical path, behind the other records of the batch)
 */
export async function withCredentialRefresh<T>(
  credentials: CredentialsSource,
  call: (creds: ProviderCredentials) => Promise<T>,
  current?: ProviderCredentials,
): Promise<T> {
  const cached = current ?? (await credentials.get());
  try {
    return await call(cached);
  } catch (error) {
    // A 401 means nothing was accepted, so one retry with fresh keys is safe (a key reset invalidates old keys).
    if (!(error instanceof ProviderUnauthorizedError)) throw error;
    return call(await credentials.get({ forceFetch: true }));
  }
}
