import type { PayoutIdentity } from '@shared/domain/identity';
import type { Payout, PayoutState } from '@shared/domain/payout';
import {
  credentialsFromSecret,
  type ProviderCredentials,
  type ProviderSecretFields,
} from '@shared/providers/payout-client';
import type { PayoutStatusOutcome } from '@shared/providers/status-map';

export type { ProviderCredentials } from '@shared/providers/payout-client';

/*
 * The ports of the payout use cases. Adapters implement them (DynamoDB, the provider HTTP client,
 * Secrets Manager, SQS, Powertools); tests, the local stack and benchmarks can pass their own.
 */

/** The payout was changed by someone else since it was read; reload and decide again. */
export class ConcurrentModificationError extends Error {
  override name = 'ConcurrentModificationError';
}

/** A page of due payouts from the sparse index, keys only. */
export interface DuePage {
  readonly identities: readonly PayoutIdentity[];
  /** Opaque cursor for the next page; absent on the last page. */
  readonly cursor?: string;
  /** Items the query read, for the "reads only what is open" guarantee and its test. */
  readonly scannedCount: number;
}

/** A listing cursor that this repository did not hand out (or that was altered). */
export class InvalidListCursorError extends Error {
  override name = 'InvalidListCursorError';
  constructor() {
    super('the cursor is not one this listing handed out; start again without it');
  }
}

/** One page of payouts in one state, newest change first. */
export interface PayoutListQuery {
  readonly state: PayoutState;
  /** Only this platform_merchant_id. */
  readonly merchant?: string;
  /** Only payouts whose last change is at or after this time. */
  readonly updatedFrom?: Date;
  /** Only payouts whose last change is at or before this time. */
  readonly updatedTo?: Date;
  /** At most this many payouts on the page (1 to 1000). */
  readonly limit: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string;
}

export interface PayoutListPage {
  readonly payouts: readonly Payout[];
  /** Present while more pages follow. */
  readonly cursor?: string;
}

export interface PayoutRepository {
  get(identity: PayoutIdentity): Promise<Payout | undefined>;
  /** Stores a new payout if none exists for its identity. */
  createAccepted(payout: Payout): Promise<{ created: boolean; payout: Payout }>;
  /**
   * Writes `next` only if the stored payout still has `previous`'s state and version.
   * @throws ConcurrentModificationError otherwise
   */
  save(previous: Payout, next: Payout): Promise<Payout>;
  /** Open payouts with nextCheckAt <= now, oldest first. */
  queryDue(now: Date, limit: number, cursor?: string): Promise<DuePage>;
  /**
   * Payouts in one state, newest change first, one page at a time, from an index (never a Scan).
   * @throws InvalidListCursorError for a cursor this listing did not hand out
   */
  listByState(query: PayoutListQuery): Promise<PayoutListPage>;
  /** Every payout with this withdrawal_reference (one per merchant and currency). */
  findByReference(withdrawalReference: string): Promise<Payout[]>;
  /** Makes open payouts with this reference due now (an order notification hints at news). */
  markDueNow(withdrawalReference: string, now: Date): Promise<number>;
}

/** The provider secret, cached; `forceFetch` once after a 401 (a key reset invalidates old keys). */
export interface CredentialsSource {
  get(options?: { forceFetch?: boolean }): Promise<ProviderCredentials>;
}

export interface VerifyAccountAnswer {
  readonly success: boolean;
  readonly message?: string;
  readonly data?: { account_name?: string } | null;
}

/** Payout acceptance: `{ success, message, data: { withdrawal_reference, status } }`. */
export interface PayoutAnswer {
  readonly success?: boolean;
  readonly data?: { readonly status?: string } | null;
}

export interface PayoutStatusAnswer {
  readonly found: boolean;
  readonly status?: string;
  readonly outcome: PayoutStatusOutcome;
  readonly raw?: unknown;
}

/**
 * The payout service, as the use cases need it. The foundation's PayoutServiceClient satisfies it;
 * failures are its named errors (rejected, unauthorized, unavailable, ambiguous).
 */
export interface PayoutProvider {
  verifyAccount(
    request: { account_number: string; account_code: string; currency: string },
    credentials: ProviderCredentials,
  ): Promise<VerifyAccountAnswer>;
  payout(
    request: { amount: string; account_number: string; account_code: string; currency: string; withdrawal_reference: string },
    credentials: ProviderCredentials,
  ): Promise<PayoutAnswer>;
  getPayout(identity: PayoutIdentity, credentials: ProviderCredentials): Promise<PayoutStatusAnswer>;
}

/** KYC gating: approved only when the KYC service confirmed it (see shared/adapters/kyc-repository.ts). */
export interface KycApprovalPort {
  check(userReference: string): Promise<'approved' | 'not_approved'>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Where a message that cannot be processed goes, with its reason (the payouts DLQ). */
export interface DeadLetterSink {
  send(body: string, reason: string, attributes?: Record<string, string>): Promise<void>;
}

/** Counters and gauges; the handlers wire Powertools metrics (EMF) with the names in METRIC. */
export interface Telemetry {
  count(metric: string, value?: number): void;
  seconds(metric: string, value: number): void;
}

/** Structured log lines with correlation keys; the Powertools logger satisfies it. */
export interface Log {
  info(message: string, ...extra: Array<Record<string, unknown>>): void;
  warn(message: string, ...extra: Array<Record<string, unknown>>): void;
  error(message: string, ...extra: Array<Record<string, unknown>>): void;
}

/** Credentials from the cached provider secret (snake_case JSON) in the client's camelCase shape. */
export function credentialsFromCachedSecret(
  secret: { get(options?: { forceFetch?: boolean }): Promise<ProviderSecretFields> },
): CredentialsSource {
  return { get: async (options) => credentialsFromSecret(await secret.get(options)) };
}

/** Telemetry over an EMF metrics emitter such as the Powertools `metrics` singleton. */
export function telemetryFrom(metrics: { addMetric(name: string, unit: 'Count' | 'Seconds', value: number): void }): Telemetry {
  return {
    count: (metric, value = 1) => metrics.addMetric(metric, 'Count', value),
    seconds: (metric, value) => metrics.addMetric(metric, 'Seconds', value),
  };
}
