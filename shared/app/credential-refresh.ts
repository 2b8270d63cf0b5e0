import type { CredentialsSource, ProviderCredentials } from '@shared/ports/payouts';
import { ProviderUnauthorizedError } from '@shared/providers/provider-errors';

/** Calls the provider with cached credentials; on a 401 fetches the secret again, once, and retries once. */
export async function withCredentialRefresh<T>(
  credentials: CredentialsSource,
  call: (creds: ProviderCredentials) => Promise<T>,
): Promise<T> {
  const cached = await credentials.get();
  try {
    return await call(cached);
  } catch (error) {
    // A 401 means nothing was accepted, so one retry with fresh keys is safe (a key reset invalidates old keys).
    if (!(error instanceof ProviderUnauthorizedError)) throw error;
    return call(await credentials.get({ forceFetch: true }));
  }
}
