import type { ProviderCredentials } from '@shared/ports/payouts';

/** The provider secret's JSON fields (see providerSecretSchema in @shared/adapters/secrets). */
export interface ProviderSecretFields {
  partner_public_key: string;
  partner_secret_key: string;
  merchant_secret_key: string;
  partner_id: string;
  platform_merchant_id: string;
}

/** Maps the snake_case provider secret to the credentials the client takes. */
export function credentialsFromSecret(secret: ProviderSecretFields): ProviderCredentials {
  return {
    partnerPublicKey: secret.partner_public_key,
    partnerSecretKey: secret.partner_secret_key,
    merchantSecretKey: secret.merchant_secret_key,
    partnerId: secret.partner_id,
    platformMerchantId: secret.platform_merchant_id,
  };
}
