import * as z from '@shared/validation/zod';
import { maskAccount, parseAccountCode } from '@shared/domain/account';
import { isWellFormedText, payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { parseAmount } from '@shared/domain/money';
import { Payout } from '@shared/domain/payout';

/** A reference that becomes part of a table key: trimmed, 1 to 128 characters, well-formed Unicode. */
const reference = z
  .string()
  .check(z.trim(), z.minLength(1), z.maxLength(128), z.refine(isWellFormedText, 'must be well-formed Unicode text (no lone surrogates)'));

/** A 3-letter upper-case currency code. */
const currency = (message?: string) => z.string().check(z.trim(), z.regex(/^[A-Z]{3}$/, message));

/**
 * The payout request message on the payouts queue (version 1). The CLI's `payouts enqueue` validates
 * rows with this same schema, so a producer learns about a bad row before it reaches the queue.
 * The amount is a decimal string checked against the currency's precision and returned canonical.
 */
export const payoutRequestSchema = z.pipe(
  z.strictObject({
    version: z.literal(1),
    platform_merchant_id: reference,
    currency: currency('must be a 3-letter upper-case currency code'),
    withdrawal_reference: reference,
    amount: z.string().check(z.trim(), z.minLength(1)),
    account_number: z.string().check(z.trim(), z.regex(/^\+?[0-9]{4,34}$/, 'must be 4 to 34 digits')),
    account_code: z.string().check(z.trim(), z.minLength(1)),
    expected_name: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))),
    user_reference: z.optional(reference),
    metadata: z.optional(z.record(z.string(), z.string())),
  }),
  z.transform((message, ctx) => {
    try {
      // The identity must make a table key (DynamoDB caps keys at 2048 bytes, encoded).
      payoutKey(message);
      return {
        ...message,
        amount: parseAmount(message.amount, message.currency) as string,
        account_code: parseAccountCode(message.account_code) as string,
      };
    } catch (error) {
      ctx.issues.push({ code: 'custom', message: error instanceof Error ? error.message : 'invalid identity, amount or account code', input: message });
      return z.NEVER;
    }
  }),
);

/** A validated payout request (amount canonical, account code checked). */
export type PayoutRequest = z.output<typeof payoutRequestSchema>;
/** What a producer writes on the queue. */
export type PayoutRequestInput = z.input<typeof payoutRequestSchema>;

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

const identityShape = z
  .object({
    platform_merchant_id: reference,
    currency: currency(),
    withdrawal_reference: reference,
  })
  .check(
    z.refine(
      (identity) => {
        try {
          payoutKey(identity);
          return true;
        } catch {
          return false;
        }
      },
      { message: 'the identity does not make a payout key' },
    ),
  );

/** One problem of a payout request, with the field it is about when it names one. */
export interface PayoutRequestProblem {
  readonly field?: string;
  readonly message: string;
}

/**
 * The schema's issues as problems an operator reads: a field the request does not have is named as
 * that field, not as zod's "Unrecognized key"; an issue of the whole message (the amount against its
 * currency) names its field in its own words. Shared by the worker's reasons and `payouts enqueue`.
 */
export function payoutRequestProblems(issues: readonly z.core.$ZodIssue[]): PayoutRequestProblem[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: key, message: 'not a field of a payout request' }))
      : [issue.path.length > 0 ? { field: issue.path.join('.'), message: issue.message } : { message: issue.message }],
  );
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
  const result = payoutRequestSchema.safeParse(json);
  if (result.success) return result.data;
  const problems = payoutRequestProblems(result.error.issues)
    .map((p) => (p.field === undefined ? p.message : `${p.field}: ${p.message}`))
    .join('; ');
  const identity = identityShape.safeParse(json);
  throw new InvalidPayoutRequestError(`invalid payout request: ${problems}`, identity.success ? identity.data : undefined, problems);
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
 * The new ACCEPTED payout of a valid request. The worker and `payouts enqueue` both create payouts
 * this way, so a stored payout compares equal however it was created. Only the mask of the account
 * number is kept.
 */
export function acceptRequest(request: PayoutRequest, now: Date, links: { retryOf?: string } = {}): Payout {
  return Payout.accept(
    {
      identity: requestIdentity(request),
      amount: request.amount,
      accountMasked: maskAccount(request.account_number),
      accountCode: request.account_code,
      expectedName: request.expected_name,
      userReference: request.user_reference,
      metadata: request.metadata,
      ...links,
    },
    now,
  );
}
