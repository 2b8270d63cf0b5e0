import * as v from '@shared/validation/valibot';
import { normalizeKycDecision, normalizeKycPhase, type KycDecision, type KycPhase } from '@shared/domain/kyc-status';
import { ProviderRejectedError, redact, type ProviderOperation } from './provider-errors';
import { HttpTransport, interpretResponse, messageOf, type TransportOptions, type TransportRequest } from './http';
import { expectShape } from './schema';

/** `baseUrl`: either of the service's two published base addresses; both serve the same paths. */
export type KycServiceClientOptions = TransportOptions;

const appSchema = v.looseObject({ _id: v.string() });

export const registerAppAnswerSchema = v.looseObject({
  message: v.optional(v.string()),
  /** The 6-digit verification token (also e-mailed). */
  value: v.string(),
  app: appSchema,
});
export type RegisterAppAnswer = v.InferOutput<typeof registerAppAnswerSchema>;

export const verifyAppAnswerSchema = v.looseObject({ message: v.optional(v.string()), data: v.optional(v.nullable(v.looseObject({}))) });
export type VerifyAppAnswer = v.InferOutput<typeof verifyAppAnswerSchema>;

export const requestTokenAnswerSchema = v.looseObject({ message: v.optional(v.string()), value: v.optional(v.string()) });
export type RequestTokenAnswer = v.InferOutput<typeof requestTokenAnswerSchema>;

export const kycTypeSchema = v.looseObject({ _id: v.string(), name: v.string(), flow_id: v.optional(v.string()) });
export type KycType = v.InferOutput<typeof kycTypeSchema>;

export const kycOrderSchema = v.looseObject({
  _id: v.string(),
  verification_url: v.optional(v.string()),
  reference: v.optional(v.string()),
  scan_ref: v.optional(v.string()),
});
export type KycOrder = v.InferOutput<typeof kycOrderSchema>;

export const verificationStatusRecordSchema = v.looseObject({ status: v.string() });
export type VerificationStatusRecord = v.InferOutput<typeof verificationStatusRecordSchema>;

export interface IndividualOrderInput {
  full_name: string;
  email: string;
  phone: string;
  app: string;
  kyc_type: string;
  callback: string;
  redirect: string;
  reference: string;
}

export interface BusinessOrderInput {
  business_name: string;
  country: string;
  business_email: string;
  app: string;
  kyc_type: string;
  callback: string;
  redirect: string;
  reference: string;
  custom_files: string[];
  state_of_jurisdiction: string;
}

/** A verification-status answer with its status word normalized. */
export interface KycStatusAnswer {
  /** The word as the service sent it (UNPROCESSED for an order nobody has worked on yet). */
  status: string;
  /** `status` read as a phase (init/initialized/started -> initiated, pending, completed), if it is one. */
  phase?: KycPhase;
  /** `status` read as a decision (awaiting_approval, approved, rejected), if it is one. */
  decision?: KycDecision;
  /** False when the service answered 400 `{ status: "UNPROCESSED" }` (the documented "not processed yet"). */
  processed: boolean;
  record: VerificationStatusRecord;
}

/**
 * Client of the KYC service. Same four failure classes as the payout client; every
 * answer keeps its extra fields. The service takes no credentials: the app id travels in
 * bodies, queries and paths.
 */
export class KycServiceClient {
  private readonly transport: HttpTransport;

  constructor(options: KycServiceClientOptions) {
    this.transport = new HttpTransport(options);
  }

  /** Closes pooled keep-alive connections. */
  close(): void {
    this.transport.close();
  }

  private async call(request: Omit<TransportRequest, 'headers'>, passthrough: number[] = []) {
    const sensitive = request.sensitive ?? [];
    // The provider's documentation lists Content-Type: application/json on every KYC endpoint, GETs included.
    return this.transport.call({ ...request, headers: { 'Content-Type': 'application/json' } }, (response) => {
      const answer = interpretResponse(response, request.operation, sensitive, passthrough);
      // The verify endpoint's refusal shape is { error: true, message, data: null }; treat it as a refusal whatever the status.
      if (typeof answer.body === 'object' && answer.body !== null && (answer.body as { error?: unknown }).error === true) {
        const message = messageOf(answer.body);
        throw new ProviderRejectedError(request.operation, `refused${message ? `: ${redact(message, sensitive)}` : ''}`, {
          httpStatus: answer.status,
          providerMessage: message === undefined ? undefined : redact(message, sensitive),
          duplicateReference: false,
        });
      }
      return answer;
    });
  }

  private async post<T>(operation: ProviderOperation, path: string, body: object, schema: v.GenericSchema<unknown, T>): Promise<T> {
    const { body: answer } = await this.call({ operation, method: 'POST', path, body });
    return expectShape(schema, answer, operation);
  }

  /** Registers the app; the service e-mails (and returns as `value`) a 6-digit token for verifyApp. */
  registerApp(input: { name: string; email: string; origin: string[] }): Promise<RegisterAppAnswer> {
    return this.post('registerApp', '/api/v1/app/register', { name: input.name, email: input.email, origin: input.origin }, registerAppAnswerSchema);
  }

  /** Verifies the app with the e-mailed token. A wrong code is Rejected. */
  verifyApp(input: { email: string; code: string }): Promise<VerifyAppAnswer> {
    return this.post('verifyApp', '/api/v1/app/verify', { email: input.email, code: input.code }, verifyAppAnswerSchema);
  }

  /** Asks for a new verification token by e-mail. */
  requestToken(input: { email: string }): Promise<RequestTokenAnswer> {
    return this.post('requestToken', '/api/v1/request', { email: input.email }, requestTokenAnswerSchema);
  }

  /** The KYC types (Individual, Business); their `_id` is the kyc_type of an order. */
  async getKycTypes(): Promise<KycType[]> {
    const { body } = await this.call({ operation: 'getKycTypes', method: 'GET', path: '/api/v1/kyc_type/' });
    return expectShape(v.array(kycTypeSchema), body, 'getKycTypes');
  }

  /** Creates an individual KYC order; send the user to its `verification_url`. */
  createIndividualOrder(input: IndividualOrderInput): Promise<KycOrder> {
    return this.post('createIndividualOrder', '/api/v1/order/', { ...input }, kycOrderSchema);
  }

  /** Creates a business KYC order. */
  createBusinessOrder(input: BusinessOrderInput): Promise<KycOrder> {
    return this.post('createBusinessOrder', '/api/v1/business/order', { ...input }, kycOrderSchema);
  }

  /**
   * GET /responses: the callbacks the service holds for the app (named by `app_id` in the query,
   * as the other documented GETs do). Its answer is not documented, so it is returned as is;
   * `readKycResponses` (shared/domain) reads it.
   */
  async getResponses(input: { app_id: string }): Promise<unknown> {
    const { body } = await this.call({ operation: 'getResponses', method: 'GET', path: '/api/v1/responses', query: { app_id: input.app_id } });
    return body;
  }

  /** Verification status and user data (query form). The authority before acting on an approval. */
  getVerificationStatus(input: { app_id: string; user_reference: string }): Promise<KycStatusAnswer> {
    return this.status('getVerificationStatus', '/api/v1/order/verification-status', {
      app_id: input.app_id,
      user_reference: input.user_reference,
    });
  }

  /** Verification status (path form). */
  getUserStatus(input: { app_id: string; reference: string }): Promise<KycStatusAnswer> {
    const path = `/api/v1/order/app/${encodeURIComponent(input.app_id)}/user_reference/${encodeURIComponent(input.reference)}/status`;
    return this.status('getUserStatus', path);
  }

  private async status(operation: ProviderOperation, path: string, query?: Record<string, string>): Promise<KycStatusAnswer> {
    const { status: httpStatus, body } = await this.call({ operation, method: 'GET', path, query }, [400]);
    if (httpStatus === 400 && !v.is(verificationStatusRecordSchema, body)) {
      // A 400 that is not the documented { status } shape is an ordinary refusal.
      return Promise.reject(
        new ProviderRejectedError(operation, 'refused with HTTP 400', { httpStatus, duplicateReference: false }),
      );
    }
    const record = expectShape(verificationStatusRecordSchema, body, operation);
    return {
      status: record.status,
      phase: normalizeKycPhase(record.status),
      decision: normalizeKycDecision(record.status),
      processed: httpStatus !== 400,
      record,
    };
  }
}
