import * as v from '@shared/validation/valibot';
import { mayBeSameAccount, maskAccount, parseAccountCode } from '@shared/domain/account';
import { isWellFormedText, payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { parseAmount } from '@shared/domain/money';
import { Payout, type OperatorAudit } from '@shared/domain/payout';

/** The longest withdrawal_reference (or merchant id, or user reference) a payout request may carry. */
export const MAX_WITHDRAWAL_REFERENCE_LENGTH = 128;

/** A reference that becomes part of a table key: trimmed, 1 to 128 characters, well-formed Unicode. */
const reference = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1),
  v.maxLength(MAX_WITHDRAWAL_REFERENCE_LENGTH),
  v.check(isWellFormedText, 'must be well-formed Unicode text (no lone surrogates)'),
);

/**
 * A payout's metadata: kept on its one DynamoDB item (at most 400 KB with its history), shown in the
 * console and by `payouts status`. Bounded like the metadata of card and payout APIs (50 keys, keys up
 * to 40 characters, values up to 500), so a payout's item stays far below DynamoDB's limit and every
 * later transition (the outcome, reconciliation) can always be written: an unbounded metadata could
 * let a payout be paid and then never recorded.
 */
export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

const metadata = v.pipe(
  v.record(
    v.pipe(v.string(), v.minLength(1), v.maxLength(METADATA_LIMITS.keyLength)),
    v.pipe(v.string(), v.maxLength(METADATA_LIMITS.valueLength)),
  ),
  v.maxEntries(METADATA_LIMITS.keys),
);

/** A 3-letter upper-case currency code. */
const currency = (message?: string) => v.pipe(v.string(), v.trim(), v.regex(/^[A-Z]{3}$/, message));

/**
 * The payout request message on the payouts queue (version 1). The CLI's `payouts enqueue` validates
 * rows with this same schema, so a producer learns about a bad row before it reaches the queue.
 * The amount is a decimal string checked against the currency's precision and returned canonical.
 */
export const payoutRequestSchema = v.pipe(
  v.strictObject({
    version: v.literal(1),
    platform_merchant_id: reference,
    currency: currency('must be a 3-letter upper-case currency code'),
    withdrawal_reference: reference,
    amount: v.pipe(v.string(), v.trim(), v.minLength(1)),
    account_number: v.pipe(v.string(), v.trim(), v.regex(/^\+?[0-9]{4,34}$/, 'must be 4 to 34 digits')),
    account_code: v.pipe(v.string(), v.trim(), v.minLength(1)),
    expected_name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200))),
    user_reference: v.optional(reference),
    metadata: v.optional(metadata),
  }),
  v.rawTransform(({ dataset: { value: message }, addIssue, NEVER }) => {
    try {
      // The identity must make a table key (DynamoDB caps keys at 2048 bytes, encoded).
      payoutKey(message);
      return {
        ...message,
        amount: parseAmount(message.amount, message.currency) as string,
        account_code: parseAccountCode(message.account_code) as string,
      };
    } catch (error) {
      addIssue({ message: error instanceof Error ? error.message : 'invalid identity, amount or account code' });
      return NEVER;
    }
  }),
);

/** A validated payout request (amount canonical, account code checked). */
export type PayoutRequest = v.InferOutput<typeof payoutRequestSchema>;
/** What a producer writes on the queue. */
export type PayoutRequestInput = v.InferInput<typeof payoutRequestSchema>;

/** Thrown when a message body is not a valid payout request; the message names fields, never values. */
export class InvalidPayoutRequestError extends Error {
  override name = 'InvalidPayoutRequestError';
  constructor(
    message: string,
    /** The identity, when the body carried a readable one, so the payout can be recorded REJECTED. */
    readonly identity?: { platform_merchant_id: string; currency: string; withdrawal_reference: string },
    /** What is wrong, field by field, without the message's lead-in: the reason of a REJECTED payout. */
    readonly problems = message,
  ) {
    super(message);
  }
}

const identityShape = v.pipe(
  v.object({
    platform_merchant_id: reference,
    currency: currency(),
    withdrawal_reference: reference,
  }),
  v.check((identity) => {
    try {
      payoutKey(identity);
      return true;
    } catch {
      return false;
    }
  }, 'the identity does not make a payout key'),
);

/**
 * The payout identity a decoded message names, read the way the worker reads it (each part trimmed,
 * the currency a 3-letter code, the whole a valid payout key), or undefined when the worker could not
 * read one: such a message never has a payout stored under it.
 */
export function payoutIdentityOf(json: unknown): PayoutIdentity | undefined {
  const identity = v.safeParse(identityShape, json);
  return identity.success ? requestIdentity(identity.output) : undefined;
}

/** One problem of a payout request, with the field it is about when it names one. */
export interface PayoutRequestProblem {
  readonly field?: string;
  readonly message: string;
}

/**
 * The schema's issues as problems an operator reads: a field that is not part of the message is named
 * with "not a field of a payout request"; an issue of the whole message (the amount against its
 * currency) names its field in its own words. Shared by the worker's reasons and `payouts enqueue`.
 */
function payoutRequestProblems(issues: readonly v.BaseIssue<unknown>[]): PayoutRequestProblem[] {
  return issues.map((issue) => {
    const field = v.getDotPath(issue);
    if (!field) return { message: issue.message };
    return { field, message: v.isUnknownKey(issue) ? 'not a field of a payout request' : issue.message };
  });
}

/** Problems as one line, `field: message; ...`, as the worker's reasons and the operator's errors say them. */
export function describePayoutRequestProblems(problems: readonly PayoutRequestProblem[]): string {
  return problems.map((p) => (p.field === undefined ? p.message : `${p.field}: ${p.message}`)).join('; ');
}

/** A decoded message checked against the schema: the valid request, or every problem it has. */
export type PayoutRequestCheck =
  | { readonly ok: true; readonly request: PayoutRequest }
  | { readonly ok: false; readonly problems: readonly PayoutRequestProblem[] };

/**
 * Checks a decoded message (a queue body's JSON, a row of `payouts enqueue`, an operator's retry)
 * with the queue's one schema, so all of them accept and refuse the same requests in the same words.
 */
export function checkPayoutRequest(value: unknown): PayoutRequestCheck {
  const result = v.safeParse(payoutRequestSchema, value);
  return result.success ? { ok: true, request: result.output } : { ok: false, problems: payoutRequestProblems(result.issues) };
}

/**
 * Parses a raw message body. Throws InvalidPayoutRequestError naming the bad fields (never their
 * values: account numbers must not reach logs) and carrying the identity when it is readable.
 */
export function parsePayoutRequest(body: string): PayoutRequest {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidPayoutRequestError('message body is not JSON');
  }
  const checked = checkPayoutRequest(json);
  if (checked.ok) return checked.request;
  const problems = describePayoutRequestProblems(checked.problems);
  const identity = v.safeParse(identityShape, json);
  throw new InvalidPayoutRequestError(`invalid payout request: ${problems}`, identity.success ? identity.output : undefined, problems);
}

/**
 * The fields of a request that differ from the stored payout of its identity: a redelivery of the
 * same request has none. The name and the KYC subject count as much as the amount and the account: a
 * retry token or a resubmission verifies with the request it is given, so a request without the
 * stored `expected_name` or `user_reference` would otherwise pay past the name policy or KYC gating
 * the first request asked for. The account is compared by its keyed fingerprint, which tells apart
 * two accounts with the same last four digits and code; a payout stored without one (before it
 * existed) is compared by its mask, and a same-mask account then only by the verified holder's name.
 * The worker and `payouts enqueue` both judge a request for a stored identity with it.
 */
export function fieldsDifferingFromStored(payout: Payout, request: PayoutRequest, accountFingerprint?: string): string[] {
  const r = payout.record;
  const otherAccount = !mayBeSameAccount(
    { masked: r.accountMasked, fingerprint: r.accountFingerprint },
    { masked: maskAccount(request.account_number), fingerprint: accountFingerprint },
  );
  const checks: Array<[string, boolean]> = [
    ['amount', r.amount !== request.amount],
    ['account_number', otherAccount],
    ['account_code', r.accountCode !== request.account_code],
    ['expected_name', r.expectedName !== request.expected_name],
    ['user_reference', r.userReference !== request.user_reference],
  ];
  return checks.filter(([, differs]) => differs).map(([field]) => field);
}

/** The payout identity a request names (its other fields stay out of the key). */
export function requestIdentity(request: PayoutIdentity): PayoutIdentity {
  return {
    platform_merchant_id: request.platform_merchant_id,
    currency: request.currency,
    withdrawal_reference: request.withdrawal_reference,
  };
}

/**
 * The new ACCEPTED payout of a valid request. The worker, `payouts enqueue` and `payouts retry` all
 * create payouts this way, so a stored payout compares equal however it was created. Only the mask
 * of the account number is kept, with the account's keyed fingerprint when the creator has the key.
 */
export function acceptRequest(
  request: PayoutRequest,
  now: Date,
  { retryOverride, ...extra }: { retryOf?: string; accountFingerprint?: string; retryOverride?: OperatorAudit } = {},
): Payout {
  return Payout.accept(
    {
      identity: requestIdentity(request),
      amount: request.amount,
      accountMasked: maskAccount(request.account_number),
      accountCode: request.account_code,
      expectedName: request.expected_name,
      userReference: request.user_reference,
      metadata: request.metadata,
      ...extra,
    },
    now,
    retryOverride,
  );
}
