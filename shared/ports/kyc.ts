import type { KycDecision } from '@shared/domain/kyc-status';
import type { KycSubject } from '@shared/domain/kyc-subject';
import type { BusinessOrderInput, IndividualOrderInput } from '@shared/providers/kyc-client';

/*
 * Ports of the KYC use cases (the callback projection, confirmation pulls, orders, gating).
 * Type-only; shared/adapters/kyc-repository.ts and shared/adapters/kyc-verifier.ts implement them.
 */

/** Identifies a KYC subject. */
export interface KycSubjectRef {
  appId: string;
  userReference: string;
}

export interface KycSubjectStore {
  getSubject(ref: KycSubjectRef): Promise<KycSubject | undefined>;
  /**
   * Saves `next` with version `next.version + 1`, on condition that the stored subject still has
   * `next.version` (or does not exist when that is 0). Returns false when someone else wrote first:
   * the caller re-reads and re-applies.
   */
  saveSubject(next: KycSubject): Promise<boolean>;
  /** Approvals waiting for pull confirmation (the sparse `unconfirmed-approvals` index). */
  unconfirmedApprovals(limit: number): Promise<KycSubjectRef[]>;
}

/** The provider's answer about one user, reduced to what the projection needs. */
export interface KycVerificationAnswer {
  decision: KycDecision | undefined;
  /** The word the provider used, kept for the record. */
  providerStatus: string;
}

/** The KYC service's verification-status endpoint: the authority on approvals. */
export interface KycVerification {
  verificationStatus(ref: KycSubjectRef): Promise<KycVerificationAnswer>;
}

/** The KYC service's `GET /responses`: every callback it has sent for an app, in an undocumented shape. */
export interface KycResponsesSource {
  getResponses(input: { app_id: string }): Promise<unknown>;
}

/** The KYC service calls that create an order; KycServiceClient (shared/providers) satisfies it. */
export interface KycOrderService {
  getKycTypes(): Promise<ReadonlyArray<{ _id: string; name: string }>>;
  createIndividualOrder(body: IndividualOrderInput): Promise<KycOrderAnswer>;
  createBusinessOrder(body: BusinessOrderInput): Promise<KycOrderAnswer>;
}

/** The fields of a created order payrelay reads; the rest is kept as sent. */
export interface KycOrderAnswer {
  _id?: string;
  verification_url?: string;
  [field: string]: unknown;
}

/** A KYC order as stored under `ORDER#<id>`. */
export interface KycOrderRecord {
  orderId: string;
  kind: 'individual' | 'business';
  appId: string;
  reference: string;
  verificationUrl: string;
  createdAt: string;
  /** The provider's answer without the callback URL (it carries the secret token). */
  answer: Record<string, unknown>;
}

export interface KycOrderStore {
  putOrder(order: KycOrderRecord): Promise<void>;
}
