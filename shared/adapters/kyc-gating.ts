import type { KycGatingEnv } from '@shared/config/worker';
import type { CallbackListing, EventApplyLog } from '@shared/ports/callbacks';
import type { KycSubjectStore, KycVerification } from '@shared/ports/kyc';
import { KycServiceClient } from '@shared/providers/kyc-client';
import { createEventStore } from './event-store';
import { createKycRepository } from './kyc-repository';
import { kycVerifier } from './kyc-verifier';
import { cachedSecret, kycSecretSchema } from './secrets';
import { xrayTracing } from './tracing';

/**
 * What the worker's KYC gate reads: the subjects, the stored KYC callbacks (applied before a refusal
 * when the applier has not yet), the KYC service's status endpoint, and the app id from the KYC secret.
 */
export interface KycGatingAdapters {
  readonly subjects: KycSubjectStore;
  readonly events: CallbackListing & EventApplyLog;
  readonly verifier: KycVerification;
  /** `forceFetch` reads the secret again, past its cache (see KycApprovalReaderOptions.appId). */
  readonly appId: (options?: { forceFetch?: boolean }) => Promise<string>;
}

/** Builds the KYC gate's adapters from KYC_TABLE_NAME, EVENTS_TABLE_NAME, KYC_SECRET_ID and KYC_API_BASE_URL (one cached secret). */
export function kycGatingAdapters(env: KycGatingEnv, timeoutMs: number): KycGatingAdapters {
  const secret = cachedSecret(env.secretId, kycSecretSchema);
  return {
    subjects: createKycRepository({ tableName: env.tableName }),
    events: createEventStore({ tableName: env.eventsTableName }),
    verifier: kycVerifier(new KycServiceClient({ baseUrl: env.apiBaseUrl, timeoutMs, tracing: xrayTracing })),
    appId: async (options) => (await secret.get(options)).app_id,
  };
}
