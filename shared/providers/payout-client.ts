import * as v from '@shared/validation/valibot';
import { parseAccountCode } from '@shared/domain/account';
import type { PayoutIdentity } from '@shared/domain/identity';
import { currencyDecimals, parseAmount } from '@shared/domain/money';
import { DEFAULT_SIGNING_PROFILE, withSignature, type SigningOperation, type SigningProfile, type SigningSecrets } from '@shared/signing';
import type { ProviderCredentials } from '@shared/ports/payouts';
import { ProviderAmbiguousError, redact, type ProviderOperation } from './provider-errors';
import { HttpTransport, interpretResponse, type TransportOptions, type TransportRequest } from './http';
import { expectShape } from './schema';
import { DEFAULT_STATUS_MAP, mapProviderStatus, type PayoutStatusOutcome, type StatusMap } from './status-map';
import {
  DEFAULT_COLLECTION_ORDER_FIELDS,
  DEFAULT_COLLECTION_ORDER_PATH,
  collectionOrderBody,
  type CollectionOrderShape,
} from './collection-order-shape';

// Re-exported where the client's users always found them; the credentials module stands alone so a
// bundle that only maps the secret (the notification receiver) builds none of the answer schemas below.
export { credentialsFromSecret, type ProviderSecretFields } from './provider-credentials';

export interface PayoutServiceClientOptions extends TransportOptions {
  signingProfile?: SigningProfile;
  /** Send `Authorization: Bearer <key>` on Payout and GetPayout (AccountVerification always uses Bearer, as the provider's documentation shows). */
  bearerPrefix?: boolean;
  /** Path segment of the key-reset operation: the documented ResetPartnerKeys, or GenKeysForPartner from its example. */
  resetKeysPath?: string;
  /** Status table for GetPayout (PROVIDER_STATUS_MAP parsed with parseStatusMap). */
  statusMap?: StatusMap;
  /** Path and body of the collection-order request (COLLECTION_ORDER_PATH / COLLECTION_ORDER_BODY via parseCollectionOrderShape). */
  collectionOrder?: CollectionOrderShape;
}

const PREFIX = '/api/v1/no-auth/PartnerP2P';

/** `{ success, message, data }` as the service answers onboarding and key reset. Extra fields are kept. */
export const partnerAnswerSchema = v.looseObject({
  success: v.optional(v.boolean()),
  message: v.optional(v.string()),
  data: v.optional(v.unknown()),
});
export type PartnerAnswer = v.InferOutput<typeof partnerAnswerSchema>;

/**
 * The longest account holder's name payrelay takes from AccountVerification (the longest expected_name
 * a request may carry, too): the name is kept on the payout, so a longer one is not a name but a
 * hostile or broken answer, Ambiguous, and the message is retried rather than paid.
 */
export const MAX_ACCOUNT_NAME_LENGTH = 200;

/**
 * AccountVerification's answer. Its message may end up in a REJECTED payout's reason ("account not
 * found: ..."), so it is redacted and shortened here, like every other provider text.
 */
export const accountVerificationSchema = v.looseObject({
  success: v.literal(true),
  message: v.optional(v.pipe(v.string(), v.transform((text) => redact(text)))),
  data: v.looseObject({ account_name: v.pipe(v.string(), v.maxLength(MAX_ACCOUNT_NAME_LENGTH)) }),
});
export type AccountVerificationResult = v.InferOutput<typeof accountVerificationSchema>;

/** Payout acceptance (the provider's documentation does not show it; the simulator answers `{ success: true, message, data: { withdrawal_reference, status } }`). */
export const payoutAcceptedSchema = v.looseObject({
  success: v.optional(v.boolean()),
  message: v.optional(v.string()),
  data: v.optional(v.nullable(v.looseObject({ withdrawal_reference: v.optional(v.string()), status: v.optional(v.string()) }))),
});
export type PayoutAccepted = v.InferOutput<typeof payoutAcceptedSchema>;

/** GetPayout answer (unwrapped). For an unknown reference most fields are empty or missing. */
export const payoutStatusSchema = v.looseObject({
  withdrawal_reference: v.optional(v.nullable(v.string())),
  amount: v.optional(v.nullable(v.union([v.string(), v.number()]))),
  currency: v.optional(v.nullable(v.string())),
  status: v.optional(v.nullable(v.string())),
});
export type PayoutStatusRecord = v.InferOutput<typeof payoutStatusSchema>;

/**
 * The provider's "not found": its payout record with the reference and the status there but blank.
 * "Not found" leads, after the grace period, to FAILED (a refused payout) or a second Payout call
 * (resubmission), so it needs the provider's own shape: `{}`, `{ "success": true }` or a record
 * wrapped in `data` say nothing of the kind, and read as ambiguous.
 */
function isEmptyRecord(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const record = body as Record<string, unknown>;
  const blank = (value: unknown): boolean => value === undefined || value === null || value === '';
  const shaped = 'withdrawal_reference' in record || 'status' in record;
  return shaped && blank(record.withdrawal_reference) && blank(record.status) && !('data' in record);
}

/** Words of a 404 that name the payout as unknown, as against a path or gateway that is not there. */
const PAYOUT_UNKNOWN = /\b(payout|withdrawal|reference|transaction|record)\b.*\b(not found|does not exist|doesn't exist|unknown)\b|\b(no|unknown) (such )?(payout|withdrawal|reference|transaction|record)\b/i;

/** Whether a 404's JSON body says this payout is unknown (a `message` or `error` naming it). */
function saysPayoutUnknown(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const { message, error } = body as { message?: unknown; error?: unknown };
  return [message, error].some((words) => typeof words === 'string' && PAYOUT_UNKNOWN.test(words));
}

export interface PayoutStatusResult {
  /**
   * False when the provider does not know the reference: its record with blank reference and status,
   * or a 404 that says so (isEmptyRecord, saysPayoutUnknown). Any other 404 or record-less answer is
   * ambiguous.
   */
  found: boolean;
  status?: string;
  outcome: PayoutStatusOutcome;
  raw: unknown;
}

/**
 * Collection-order answer (the provider's documentation does not show it; the simulator answers `{ success: true, message,
 * data: { order_reference, virtual_account: { account_number, account_name, bank_name } } }`).
 * Every field is optional: an order the provider accepted without them is still accepted.
 */
export const collectionOrderAnswerSchema = v.looseObject({
  success: v.optional(v.boolean()),
  message: v.optional(v.string()),
  data: v.optional(
    v.nullable(
      v.looseObject({
        order_reference: v.optional(v.string()),
        virtual_account: v.optional(
          v.looseObject({ account_number: v.optional(v.string()), account_name: v.optional(v.string()), bank_name: v.optional(v.string()) }),
        ),
      }),
    ),
  ),
});
export type CollectionOrderAnswer = v.InferOutput<typeof collectionOrderAnswerSchema>;

export interface CollectionOrderInput {
  /** payrelay's id of the order: the provider's partner_order_id. */
  partnerOrderId: string;
  amount: string;
  currency: string;
  /** When the order is made (the body's timestamp). */
  at: Date;
}

export interface VerifyAccountInput {
  account_number: string;
  account_code: string;
  currency: string;
}

export interface PayoutInput {
  amount: string;
  account_number: string;
  account_code: string;
  currency: string;
  withdrawal_reference: string;
}

const secretsOf = (creds: ProviderCredentials): SigningSecrets => ({
  partnerSecret: creds.partnerSecretKey,
  merchantSecret: creds.merchantSecretKey,
});

const sensitiveOf = (creds: ProviderCredentials, accountNumber?: string): string[] =>
  [creds.partnerPublicKey, creds.partnerSecretKey, creds.merchantSecretKey, accountNumber ?? ''].filter((v) => v.length > 0);

/**
 * Client of the partner payout service. Every failure is one of ProviderRejectedError,
 * ProviderUnauthorizedError, ProviderUnavailableError or ProviderAmbiguousError. Credentials are
 * passed per call: the caller caches them and refreshes once on Unauthorized. Inputs are validated
 * before anything is sent (domain errors: InvalidAmountError, InvalidAccountCodeError...).
 */
export class PayoutServiceClient {
  private readonly transport: HttpTransport;
  private readonly signingProfile: SigningProfile;
  private readonly bearerPrefix: boolean;
  private readonly resetKeysPath: string;
  private readonly statusMap: StatusMap;
  private readonly collectionOrderShape: CollectionOrderShape;

  constructor(options: PayoutServiceClientOptions) {
    this.transport = new HttpTransport(options);
    this.signingProfile = options.signingProfile ?? DEFAULT_SIGNING_PROFILE;
    this.bearerPrefix = options.bearerPrefix ?? true;
    this.resetKeysPath = options.resetKeysPath ?? 'ResetPartnerKeys';
    if (!/^[A-Za-z0-9_-]+$/.test(this.resetKeysPath)) {
      throw new TypeError('resetKeysPath must be a single path segment such as ResetPartnerKeys or GenKeysForPartner');
    }
    this.statusMap = options.statusMap ?? DEFAULT_STATUS_MAP;
    this.collectionOrderShape = options.collectionOrder ?? { path: DEFAULT_COLLECTION_ORDER_PATH, fields: DEFAULT_COLLECTION_ORDER_FIELDS };
  }

  /** Closes pooled keep-alive connections (tests, CLI exit). */
  close(): void {
    this.transport.close();
  }

  private async call(request: TransportRequest & { sensitive: string[] }, passthrough: number[] = []) {
    return this.transport.call(request, (response) => interpretResponse(response, request.operation, request.sensitive, passthrough));
  }

  private authorization(creds: ProviderCredentials, forceBearer = false): string {
    return forceBearer || this.bearerPrefix ? `Bearer ${creds.partnerPublicKey}` : creds.partnerPublicKey;
  }

  /**
   * A POST whose body is signed with the profile's recipe and carries the partner key in
   * Authorization (AccountVerification, Payout, collection orders). The keys, and the account
   * number where the body has one, never appear in an error message.
   */
  private async signedPost<T>(
    operation: ProviderOperation,
    path: string,
    request: { fields: object; recipe: SigningOperation; creds: ProviderCredentials; accountNumber?: string; forceBearer?: boolean },
    schema: v.GenericSchema<unknown, T>,
  ): Promise<T> {
    const { creds } = request;
    const { body: answer } = await this.call({
      operation,
      method: 'POST',
      path,
      headers: { Authorization: this.authorization(creds, request.forceBearer), 'Content-Type': 'application/json' },
      body: withSignature(request.fields, request.recipe, secretsOf(creds), this.signingProfile),
      sensitive: sensitiveOf(creds, request.accountNumber),
    });
    return expectShape(schema, answer, operation);
  }

  private async partnerCall(operation: ProviderOperation, path: string, body: object): Promise<PartnerAnswer> {
    const { body: answer } = await this.call({
      operation,
      method: 'POST',
      path,
      headers: { 'Content-Type': 'application/json' },
      body,
      sensitive: [],
    });
    return expectShape(partnerAnswerSchema, answer, operation);
  }

  /** OnboardPartner: the keys are e-mailed to the partner as a one-time link. No Authorization header. */
  onboardPartner(input: { partner_code: string; email: string }): Promise<PartnerAnswer> {
    return this.partnerCall('onboardPartner', `${PREFIX}/OnboardPartner`, {
      partner_code: input.partner_code,
      email: input.email,
    });
  }

  /** ResetPartnerKeys (or the configured GenKeysForPartner): new keys by e-mail; the old keys stop working. */
  resetPartnerKeys(input: { email: string; partner_code: string }): Promise<PartnerAnswer> {
    return this.partnerCall('resetPartnerKeys', `${PREFIX}/${this.resetKeysPath}/`, {
      email: input.email,
      partner_code: input.partner_code,
    });
  }

  /**
   * AccountVerification: the owner name of a bank account or mobile-money number. Signed with
   * the profile's accountVerification recipe (partner secret by default).
   */
  async verifyAccount(input: VerifyAccountInput, creds: ProviderCredentials): Promise<AccountVerificationResult> {
    currencyDecimals(input.currency);
    return this.signedPost(
      'verifyAccount',
      `${PREFIX}/AccountVerification/`,
      {
        fields: { account_number: input.account_number, account_code: parseAccountCode(input.account_code), currency: input.currency },
        recipe: 'accountVerification',
        creds,
        accountNumber: input.account_number,
        forceBearer: true,
      },
      accountVerificationSchema,
    );
  }

  /**
   * Payout. Call it at most once per payout identity: any failure but Rejected and Unavailable
   * may have moved money. The amount is sent in canonical form for its currency.
   */
  async payout(input: PayoutInput, creds: ProviderCredentials): Promise<PayoutAccepted> {
    return this.signedPost(
      'payout',
      `${PREFIX}/Payout/`,
      {
        // Field order follows the documented field table, since the default profile signs in insertion order.
        fields: {
          amount: parseAmount(input.amount, input.currency),
          account_number: input.account_number,
          currency: input.currency,
          withdrawal_reference: input.withdrawal_reference,
          partner_id: creds.partnerId,
          platform_merchant_id: creds.platformMerchantId,
          account_code: parseAccountCode(input.account_code),
        },
        recipe: 'payout',
        creds,
        accountNumber: input.account_number,
      },
      payoutAcceptedSchema,
    );
  }

  /**
   * Creates a collection order: a request for money the customer pays in. Path and body follow the
   * configured shape; signed with the profile's collectionOrder recipe (merchant + partner secrets by
   * default). No money leaves on this call, but an Ambiguous failure still means the order may exist.
   */
  async createCollectionOrder(input: CollectionOrderInput, creds: ProviderCredentials): Promise<CollectionOrderAnswer> {
    return this.signedPost(
      'createCollectionOrder',
      this.collectionOrderShape.path,
      {
        fields: collectionOrderBody(this.collectionOrderShape, {
          orderId: input.partnerOrderId,
          amount: parseAmount(input.amount, input.currency),
          currency: input.currency,
          timestamp: input.at.toISOString(),
          epochSeconds: String(Math.floor(input.at.getTime() / 1000)),
          partnerId: creds.partnerId,
          merchantId: creds.platformMerchantId,
        }),
        recipe: 'collectionOrder',
        creds,
      },
      collectionOrderAnswerSchema,
    );
  }

  /**
   * GetPayout: the provider's view of one payout. `found: false` only for the provider's own "not
   * found" (see PayoutStatusResult); a 404 that does not say so, an answer without the record and an
   * answer about another reference are Ambiguous.
   */
  async getPayout(identity: PayoutIdentity, creds: ProviderCredentials): Promise<PayoutStatusResult> {
    const operation = 'getPayout';
    const { status, body } = await this.call(
      {
        operation,
        method: 'GET',
        path: `${PREFIX}/GetPayout`,
        query: {
          platform_merchant_id: identity.platform_merchant_id,
          currency: identity.currency,
          withdrawal_reference: identity.withdrawal_reference,
        },
        headers: { Authorization: this.authorization(creds) },
        sensitive: sensitiveOf(creds),
      },
      [404],
    );
    if (status === 404) {
      if (isEmptyRecord(body) || saysPayoutUnknown(body)) return { found: false, outcome: 'unrecognized', raw: body };
      throw new ProviderAmbiguousError(operation, 'HTTP 404 that does not say this payout is unknown (a wrong path or a gateway?); outcome unknown', {
        httpStatus: status,
      });
    }
    const record = expectShape(payoutStatusSchema, body, operation);
    const reference = record.withdrawal_reference ?? '';
    const word = record.status ?? '';
    if (reference === '' && word === '') {
      if (isEmptyRecord(body)) return { found: false, outcome: 'unrecognized', raw: body };
      throw new ProviderAmbiguousError(operation, 'answer without the payout record (neither withdrawal_reference nor status); outcome unknown', {
        httpStatus: status,
      });
    }
    if (reference !== '' && reference !== identity.withdrawal_reference) {
      throw new ProviderAmbiguousError(operation, 'answer is about another withdrawal_reference; outcome unknown', {
        httpStatus: status,
      });
    }
    return { found: true, status: word, outcome: mapProviderStatus(word, this.statusMap), raw: body };
  }
}
