import { mayBeSameAccount, maskAccount } from '@shared/domain/account';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { operatorWho, type Payout } from '@shared/domain/payout';
import { acceptRequest, checkPayoutRequest, describePayoutRequestProblems } from '@shared/messages/payout-request';
import type { AccountFingerprints, PayoutRequestQueue } from '@shared/ports/payouts';
import { InvalidOperatorInputError, OperatorActionRefusedError, PayoutNotFoundError } from './operator-errors';
import { NEVER_EXECUTED_EVIDENCE, NOT_FOUND_LINE, OVERRIDDEN_WITH_FORCE, askProvider, type OperatorDeps } from './resolve-payout';
import { describeNotices, noticesNaming } from './payout-notices';

export interface RetryDeps extends OperatorDeps {
  readonly queue: PayoutRequestQueue;
  /**
   * The stack's account fingerprints: the full number is checked against the first payout's
   * fingerprint, and the new payout stores its own. Absent for a stack deployed before the key
   * existed; the number is then checked by its mask alone.
   */
  readonly fingerprints?: AccountFingerprints;
}

export interface RetryRequest {
  /** The FAILED payout to retry. */
  readonly identity: PayoutIdentity;
  /** The withdrawal_reference of the new payout (same merchant and currency). */
  readonly newReference: string;
  /** Who retries (recorded on the first payout's history). */
  readonly by: string;
  /** The identity that runs the retry (the caller resolves it), recorded beside `by` when it differs. */
  readonly actor?: string;
  /**
   * The beneficiary's full account number, when the provider's record of the first payout does not
   * carry it (payrelay stores only the mask). Its mask must match the first payout's.
   */
  readonly accountNumber?: string;
  /**
   * Retry although the provider's "not found" does not show the first payout was never executed (a
   * stored notification names it, it acknowledged it, or its FAILED rests on an operator's override
   * while a Payout call may have reached it). For the operator who holds the provider's written
   * confirmation that the first was never executed, given as `evidence`; if it was executed after
   * all, the beneficiary is paid twice. Both payouts' histories record it. Never overrides a provider
   * that holds the first payout, or that cannot be asked.
   */
  readonly force?: boolean;
  /** What outweighs the provider's answer for a forced retry (required with `force`), recorded verbatim. */
  readonly evidence?: string;
}

export interface RetryResult {
  readonly original: Payout;
  readonly retry: Payout;
  /** Whether this call sent the new payout's message (false when a previous run already had). */
  readonly sent: boolean;
  /** Whether `force` overrode the provider's answer (recorded in both payouts' histories). */
  readonly forced: boolean;
}

/**
 * The beneficiary's full number: the provider's record of the first payout, else the operator's,
 * provided it is the first payout's account: the same mask and, when both are known, the same
 * fingerprint (a number that differs only in its hidden digits is another account).
 */
async function accountNumberFor(original: Payout, fromProvider: unknown, given: string | undefined, fingerprints: AccountFingerprints | undefined): Promise<string> {
  const { accountMasked: mask, accountFingerprint, accountCode } = original.record;
  const isTheAccount = async (number: string): Promise<boolean> =>
    mayBeSameAccount(
      { masked: mask, fingerprint: accountFingerprint },
      { masked: maskAccount(number), fingerprint: await fingerprints?.of({ account_code: accountCode, account_number: number }) },
    );
  const provider = (fromProvider as { customer?: { accountNumber?: unknown } } | undefined)?.customer?.accountNumber;
  if (typeof provider === 'string' && (await isTheAccount(provider))) return provider;
  if (given === undefined) {
    // The provider's number may be written another way (a country prefix) than the request that was fingerprinted.
    const why =
      typeof provider === 'string' && provider.length >= 4 && provider.slice(-4) === mask.slice(-4)
        ? `the provider's record gives a number ending like it that is not the account stored (written another way, or another account)`
        : `the provider's record does not give it`;
    throw new InvalidOperatorInputError(`payrelay keeps only the masked account (${mask}) and ${why}: give the beneficiary's full account number`, 'accountNumber');
  }
  const number = given.trim();
  if (maskAccount(number) !== mask) throw new InvalidOperatorInputError(`the account number given does not match the first payout's account ${mask}`, 'accountNumber');
  if (!(await isTheAccount(number))) {
    throw new InvalidOperatorInputError(`the account number given is not the first payout's account: its last digits match ${mask}, the digits before them do not`, 'accountNumber');
  }
  return number;
}

/**
 * Whether the payout's FAILED rests on the provider's own failure word: GetPayout's status (the
 * reconciler keeps it as `providerStatus`; a FAILED from "not found" or a refusal has none), or an
 * operator's resolve that GetPayout agreed with (not overridden with --force).
 */
function failedOnProviderWord(payout: Payout): boolean {
  const entry = payout.record.history.findLast((h) => h.to === 'FAILED' && h.from !== 'FAILED');
  if (entry === undefined) return false;
  // An operator's FAILED is the provider's word only if GetPayout said failed then: not forced, and not
  // "not found" (allowed unforced only for a payout not yet acknowledged, which it is by now).
  if (entry.by !== undefined) return !(entry.providerAnswer ?? '').includes(OVERRIDDEN_WITH_FORCE) && !(entry.providerAnswer ?? '').startsWith(NOT_FOUND_LINE);
  return payout.record.providerStatus !== undefined && payout.record.providerStatus !== '';
}

/**
 * The operator's resolve that made the payout FAILED against the provider's answer (--force), when
 * that is what its FAILED rests on: the last move to FAILED is an operator's and records an override.
 */
function failedOnOverride(payout: Payout): { by: string; at: string } | undefined {
  const entry = payout.record.history.findLast((h) => h.to === 'FAILED' && h.from !== 'FAILED');
  if (entry?.by === undefined || !(entry.providerAnswer ?? '').includes(OVERRIDDEN_WITH_FORCE)) return undefined;
  return { by: entry.by, at: entry.at };
}

/**
 * Why GetPayout's "not found" for the first payout does not show that it was never executed, or
 * undefined when it does. Each is the provider's record possibly lagging behind a payout it holds:
 * an authentic stored notification names it; it acknowledged the reference and its FAILED rests on no
 * failure word of the provider's; or its FAILED rests on an operator's override of the provider's
 * answer while a Payout call may have reached the provider. Not so: a FAILED GetPayout confirmed, one
 * reached under rule 1 or 2 (not found for the whole grace period, never acknowledged), an operator's
 * unforced resolve (allowed on "not found" only when no call may have reached the provider), and a
 * payout whose intent was released as never sent.
 */
async function notFoundDoubt(deps: RetryDeps, first: Payout): Promise<string | undefined> {
  const ref = first.record.identity.withdrawal_reference;
  const notified = describeNotices(await noticesNaming(deps.notifications, first.record.identity, first.record.createdAt));
  if (notified !== undefined) return `GetPayout says it does not know ${ref}, but ${notified}, so it could still be delivered`;
  if (first.acknowledged && !failedOnProviderWord(first)) {
    // The provider had held the reference, and its FAILED rests on no word of the provider's (an
    // operator's --force, or "not found" while a racing look saw it held): "not found" now may be a
    // lagging or lost record of a payout that is still delivered.
    return `the provider acknowledged ${ref} and now says it does not know it, so it could still be delivered`;
  }
  const override = failedOnOverride(first);
  if (override !== undefined && first.mayHaveReachedProvider) {
    return (
      `${ref} is FAILED on ${override.by}'s resolve against the provider's answer (--force, at ${override.at}), and a Payout call for it may have reached the provider; ` +
      `"not found" alone does not show it was never executed (the provider's record may lag), so it could still be delivered`
    );
  }
  return undefined;
}

/** What to do instead of retrying a payout in a state that is not FAILED. */
function notRetryable(ref: string, state: Payout['state']): string {
  if (state === 'REVERSED') {
    return `payout ${ref} is REVERSED: it was delivered and the money came back; payouts retry is only for a FAILED payout. Once the cause is fixed (e.g. the beneficiary's account), send a new payout request under a new withdrawal_reference`;
  }
  if (state === 'SUCCEEDED') {
    return `payout ${ref} is SUCCEEDED: the provider delivered it, and a retry would pay twice. If another payment is owed once the cause is fixed, send a new payout request under a new withdrawal_reference`;
  }
  return `payout ${ref} is ${state}; only a FAILED payout can be retried`;
}

/**
 * Retries a FAILED payout as a new payout to the same beneficiary for the same amount, under a new
 * withdrawal_reference, linked both ways (retriedAs on the first, retryOf on the new one). Refused
 * unless the first is FAILED and GetPayout confirms it cannot still be delivered: it says failed, or
 * does not know the payout and nothing shows that "not found" may be a lagging record (notFoundDoubt;
 * only `force` with evidence overrides that, recorded on both payouts). The first payout is linked first by a conditional write, so two different retries of
 * one payout cannot both start; running the same retry again finishes an interrupted one. A new
 * reference that another payout already holds is refused before the link.
 * @throws PayoutNotFoundError, InvalidOperatorInputError, OperatorActionRefusedError, ConcurrentModificationError
 */
export async function retryPayout(deps: RetryDeps, request: RetryRequest): Promise<RetryResult> {
  const first = await deps.repository.get(request.identity);
  const ref = request.identity.withdrawal_reference;
  if (!first) throw new PayoutNotFoundError(`no payout ${ref} for merchant ${request.identity.platform_merchant_id} in ${request.identity.currency}`);
  if (first.state !== 'FAILED') throw new OperatorActionRefusedError(notRetryable(ref, first.state), 'state');
  const force = request.force === true;
  const evidence = request.evidence?.trim() ?? '';
  if (force && evidence === '') {
    throw new InvalidOperatorInputError(`a forced retry needs evidence: the provider's written confirmation that it never executed ${ref} (e.g. a support ticket)`);
  }
  const identity: PayoutIdentity = { ...request.identity, withdrawal_reference: request.newReference.trim() };
  try {
    payoutKey(identity);
  } catch (error) {
    throw new InvalidOperatorInputError(`the new reference cannot be used: ${(error as Error).message}`, 'newReference');
  }
  if (identity.withdrawal_reference === ref) throw new InvalidOperatorInputError('the new reference must differ from the reference of the failed payout', 'newReference');
  if (first.record.retriedAs !== undefined && first.record.retriedAs !== identity.withdrawal_reference) {
    throw new OperatorActionRefusedError(`payout ${ref} was already retried as ${first.record.retriedAs}`, 'state');
  }

  const { answer, line } = await askProvider(deps, request.identity);
  if (answer === undefined) throw new OperatorActionRefusedError(`not retried: the provider could not be asked (${line}); try again later`, 'provider');
  if (answer.found && answer.outcome !== 'failed') {
    throw new OperatorActionRefusedError(`not retried: the provider says ${answer.status ?? ''} for ${ref}, so it could still be delivered`, 'provider');
  }
  const doubt = answer.found ? undefined : await notFoundDoubt(deps, first);
  if (doubt !== undefined && !force) {
    throw new OperatorActionRefusedError(`not retried: ${doubt}; ${NEVER_EXECUTED_EVIDENCE}`, 'provider', true);
  }
  const override = doubt === undefined ? undefined : { evidence, providerAnswer: `${line}; ${doubt}; ${OVERRIDDEN_WITH_FORCE}` };

  const parsed = checkPayoutRequest({
    version: 1,
    ...identity,
    amount: first.record.amount,
    account_number: await accountNumberFor(first, answer.raw, request.accountNumber, deps.fingerprints),
    account_code: first.record.accountCode,
    ...(first.record.expectedName !== undefined ? { expected_name: first.record.expectedName } : {}),
    ...(first.record.userReference !== undefined ? { user_reference: first.record.userReference } : {}),
    ...(first.record.metadata !== undefined ? { metadata: first.record.metadata } : {}),
  });
  if (!parsed.ok) {
    throw new InvalidOperatorInputError(`the retry is not a valid payout request: ${describePayoutRequestProblems(parsed.problems)}`);
  }
  const message = parsed.request;

  const now = deps.clock.now();
  const taken = (): OperatorActionRefusedError =>
    new OperatorActionRefusedError(`reference ${identity.withdrawal_reference} is already used by another payout; choose another new reference`, 'state', false, 'newReference');
  let original = first;
  if (first.record.retriedAs === undefined) {
    // The link is what stops a second retry, so it is written only for a reference that is free: a
    // link to another payout's reference would leave this one neither retried nor retryable.
    const existing = await deps.repository.get(identity);
    if (existing && existing.record.retryOf !== ref) throw taken();
    original = await deps.repository.save(first, first.retriedWith(identity.withdrawal_reference, request.by, now, request.actor, override));
  }

  const accountFingerprint = await deps.fingerprints?.of(message);
  const retryOverride = override === undefined ? undefined : { ...operatorWho(request.by, request.actor), ...override };
  const { created, payout: retry } = await deps.repository.createAccepted(acceptRequest(message, now, { retryOf: ref, accountFingerprint, retryOverride }));
  if (!created && retry.record.retryOf !== ref) throw taken();
  // A rerun after an interruption sends again only while nothing processed the new payout yet.
  const sent = created || retry.state === 'ACCEPTED';
  if (sent) await deps.queue.send(JSON.stringify(message));
  deps.log.info('failed payout retried as a new payout', {
    payoutKey: original.key,
    withdrawalReference: ref,
    retryReference: identity.withdrawal_reference,
    ...operatorWho(request.by, request.actor),
    providerAnswer: line,
    sent,
    forced: override !== undefined,
  });
  if (override !== undefined) {
    deps.log.warn("payout retried against the provider's answer (--force): it may be paid twice", { payoutKey: original.key, retryReference: identity.withdrawal_reference, why: doubt });
  }
  return { original, retry, sent, forced: override !== undefined };
}
