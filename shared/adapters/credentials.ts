import type { CredentialsSource, ProviderCredentials } from '@shared/ports/payouts';
import type { PreviousSecret } from '@shared/ports/secrets';
import { credentialsFromSecret, type ProviderSecretFields } from '@shared/providers/provider-credentials';

/**
 * Credentials from the cached provider secret (snake_case JSON) in the client's camelCase shape,
 * so the use cases can force one re-read after a 401 without knowing the secret's layout.
 */
export function credentialsFromCachedSecret(
  secret: { get(options?: { forceFetch?: boolean }): Promise<ProviderSecretFields> },
): CredentialsSource {
  return { get: async (options) => credentialsFromSecret(await secret.get(options)) };
}

/** The previous provider secret (snake_case JSON, see previousSecret) in the client's camelCase shape. */
export function previousCredentialsFrom(previous: PreviousSecret<ProviderSecretFields>): PreviousSecret<ProviderCredentials> {
  return {
    async get() {
      const found = await previous.get();
      return found && { value: credentialsFromSecret(found.value), replacedAt: found.replacedAt };
    },
  };
}
