import type { KycVerification } from '@shared/ports/kyc';
import type { KycServiceClient } from '@shared/providers/kyc-client';

/** The verification-status endpoint (query form) as the confirmation use cases need it. */
export function kycVerifier(client: Pick<KycServiceClient, 'getVerificationStatus'>): KycVerification {
  return {
    async verificationStatus(ref) {
      const answer = await client.getVerificationStatus({ app_id: ref.appId, user_reference: ref.userReference });
      return { decision: answer.decision, providerStatus: answer.status };
    },
  };
}
