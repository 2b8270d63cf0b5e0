import type { PayoutIdentity } from '@shared/domain/identity';
import * as v from '@shared/validation/valibot';

/**
 * One delayed check of one payout on the checks queue (version 1): which payout, and the version of
 * it that the check was scheduled for. It carries no state: the checker reads the payout and acts only
 * while the stored version is still that one, so a duplicated or late message finds a newer version
 * and does nothing (whoever wrote the newer version scheduled the next check).
 */
export const payoutCheckSchema = v.strictObject({
  version: v.literal(1),
  platform_merchant_id: v.pipe(v.string(), v.minLength(1)),
  currency: v.pipe(v.string(), v.minLength(1)),
  withdrawal_reference: v.pipe(v.string(), v.minLength(1)),
  payoutVersion: v.pipe(v.number(), v.integer(), v.gtValue(0)),
});

export type PayoutCheck = v.InferOutput<typeof payoutCheckSchema>;

/** The longest a check message can be delayed (SQS DelaySeconds); a later check is left to the scheduled sweep. */
export const MAX_CHECK_DELAY_SECONDS = 900;

/** Thrown when a checks-queue message is not a payout check; the message names fields, never values. */
export class InvalidPayoutCheckError extends Error {
  override name = 'InvalidPayoutCheckError';
}

/** The check of `identity` at payout version `payoutVersion`. */
export function payoutCheck(identity: PayoutIdentity, payoutVersion: number): PayoutCheck {
  const { platform_merchant_id, currency, withdrawal_reference } = identity;
  return { version: 1, platform_merchant_id, currency, withdrawal_reference, payoutVersion };
}

/**
 * Parses a checks-queue message body.
 * @throws InvalidPayoutCheckError when the body is not JSON or not a version-1 payout check
 */
export function parsePayoutCheck(body: string): PayoutCheck {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidPayoutCheckError('payout check: the body is not JSON');
  }
  const parsed = v.safeParse(payoutCheckSchema, json);
  if (!parsed.success) throw new InvalidPayoutCheckError(`payout check: ${v.describeIssues(parsed.issues)}`);
  return parsed.output;
}
