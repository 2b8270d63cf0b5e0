import { referenceProblem } from '@shared/domain/callbacks';
import { normalizePhoneNumber } from '@shared/domain/phone';
import type { KycOrderService, KycOrderStore } from '@shared/ports/kyc';
import type { Clock, Log } from '@shared/ports/runtime';
import type { SecretSource } from '@shared/ports/secrets';

interface OrderCommon {
  /** The app-side identifier of the user: becomes user_reference on every callback. */
  reference: string;
  /** Where the user goes after the journey. */
  redirect?: string;
  /** KYC type id; looked up by name (Individual / Business) when absent. */
  kycType?: string;
}

export interface IndividualOrderInput extends OrderCommon {
  kind: 'individual';
  full_name: string;
  email: string;
  phone: string;
}

export interface BusinessOrderInput extends OrderCommon {
  kind: 'business';
  business_name: string;
  country: string;
  business_email: string;
  state_of_jurisdiction?: string;
  custom_files?: string[];
}

export type CreateKycOrderInput = IndividualOrderInput | BusinessOrderInput;

export interface CreateKycOrderDeps {
  kyc: KycOrderService;
  orders: KycOrderStore;
  secret: SecretSource<{ app_id: string; callback_token: string }>;
  /** Public base URL of this deployment's HTTP API, e.g. `https://abc.execute-api.eu-west-1.amazonaws.com`. */
  apiBaseUrl: string;
  clock: Clock;
  log: Log;
}

export interface CreatedKycOrder {
  orderId: string;
  kind: CreateKycOrderInput['kind'];
  reference: string;
  verificationUrl: string;
}

/** The order answer lacks an id or a verification_url: nothing to send the user to. */
export class KycOrderAnswerError extends Error {
  override name = 'KycOrderAnswerError';
}

/** Input that cannot make an order (a missing field, no matching KYC type). */
export class KycOrderInputError extends Error {
  override name = 'KycOrderInputError';
}

/** `<apiBaseUrl>/callbacks/kyc/<token>`: the route the KYC service will post this order's callbacks to. */
export function kycCallbackUrl(apiBaseUrl: string, token: string): string {
  return `${apiBaseUrl.replace(/\/+$/, '')}/callbacks/kyc/${encodeURIComponent(token)}`;
}

async function resolveKycType(kyc: KycOrderService, input: CreateKycOrderInput): Promise<string> {
  if (input.kycType !== undefined && input.kycType !== '') return input.kycType;
  const types = await kyc.getKycTypes();
  const match = types.find((type) => type.name.trim().toLowerCase() === input.kind);
  if (match === undefined) {
    throw new KycOrderInputError(`the KYC service lists no "${input.kind}" KYC type; pass its id explicitly`);
  }
  return match._id;
}

/**
 * Creates an individual or a business KYC order whose callbacks come back to this deployment
 * (the URL carries the secret token), stores it as `ORDER#<id>` and returns where to send the user.
 * @throws KycOrderInputError for a user reference its callbacks could never be applied with;
 *   InvalidPhoneNumberError for an individual's phone number not in international form (the KYC
 *   service gets it as `+` and digits: spaces and dashes are dropped); both before anything is asked
 */
export async function createKycOrder(deps: CreateKycOrderDeps, input: CreateKycOrderInput): Promise<CreatedKycOrder> {
  if (input.reference.trim() === '') throw new KycOrderInputError('reference (the user reference) is required');
  // Its callbacks carry this reference: one they cannot be applied with would make a journey nobody here ever sees.
  const badReference = referenceProblem('reference (the user reference)', input.reference.trim());
  if (badReference) throw new KycOrderInputError(`${badReference}: its KYC callbacks could never be applied`);
  const order: CreateKycOrderInput = input.kind === 'individual' ? { ...input, phone: normalizePhoneNumber(input.phone) } : input;
  const secret = await deps.secret.get();
  const common = {
    app: secret.app_id,
    kyc_type: await resolveKycType(deps.kyc, input),
    callback: kycCallbackUrl(deps.apiBaseUrl, secret.callback_token),
    redirect: input.redirect ?? '',
    reference: input.reference,
  };
  const answer =
    order.kind === 'individual'
      ? await deps.kyc.createIndividualOrder({ ...common, full_name: order.full_name, email: order.email, phone: order.phone })
      : await deps.kyc.createBusinessOrder({
          ...common,
          business_name: order.business_name,
          country: order.country,
          business_email: order.business_email,
          state_of_jurisdiction: order.state_of_jurisdiction ?? order.country,
          custom_files: order.custom_files ?? [],
        });
  const orderId = typeof answer._id === 'string' ? answer._id : '';
  const verificationUrl = typeof answer.verification_url === 'string' ? answer.verification_url : '';
  if (orderId === '' || verificationUrl === '') {
    throw new KycOrderAnswerError('the KYC service created no order id or verification_url');
  }
  const { callback: _callback, ...answerWithoutToken } = answer;
  await deps.orders.putOrder({
    orderId,
    kind: input.kind,
    appId: secret.app_id,
    reference: input.reference,
    verificationUrl,
    createdAt: deps.clock.now().toISOString(),
    answer: answerWithoutToken,
  });
  deps.log.info('KYC order created', { userReference: input.reference, orderId, kind: input.kind });
  return { orderId, kind: input.kind, reference: input.reference, verificationUrl };
}
