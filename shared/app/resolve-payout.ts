import type { PayoutIdentity } from '@shared/domain/identity';
import { operatorWho, type Payout } from '@shared/domain/payout';
import { InvalidOperatorInputError, OperatorActionRefusedError, PayoutNotFoundError } from './operator-errors';
import type { CredentialsSource, PayoutProvider, PayoutRepository, PayoutStatusAnswer } from '@shared/ports/payouts';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import { withCredentialRefresh } from './credential-refresh';
import { countOutcome } from './outcome-metrics';
import { describeNotices, noticesNaming, type NotificationStore } from './payout-notices';

/** How a recorded provider answer of "not found" starts (retryPayout reads it). */
export const NOT_FOUND_LINE = 'not found';

/** What a forced resolve's recorded provider answer ends with (retryPayout reads it). */
export const OVERRIDDEN_WITH_FORCE = 'overridden with --force';

export interface OperatorDeps {
  readonly repository: PayoutRepository;
  readonly provider: PayoutProvider;
  readonly credentials: CredentialsSource;
  readonly clock: Clock;
  readonly log: Log;
  readonly telemetry: Telemetry;
  /**
   * The events table's stored order notifications, read where a decision would rest on GetPayout's
   * "not found" (resolve --as failed, retry): an authentic one naming the payout is the provider
   * acknowledging it (money-safety rule 1). Required, so that no caller can leave the look out.
   */
  readonly notifications: NotificationStore;
}

/**
 * What the operator must hold to settle a payout as FAILED against a "not found" or a record still
 * open: the refusal says it, since "not found" alone never shows that nothing was paid.
 */
export const NEVER_EXECUTED_EVIDENCE = "what settles it is the provider's written confirmation that it never executed this withdrawal_reference (or that it failed), e.g. a support ticket; until then leave it in review";

/** What the operator must hold to settle a payout as SUCCEEDED against the provider's answer. */
const CREDITED_EVIDENCE = "what settles it is proof that the beneficiary was credited, e.g. the provider's written confirmation or a bank statement line";

/** What the operator must hold when the provider could not be asked. */
const ASK_AGAIN = 'try again once the provider answers';

export interface ResolveRequest {
  readonly identity: PayoutIdentity;
  readonly as: 'succeeded' | 'failed';
  /** What the operator saw (a bank statement line, a provider ticket); required, recorded verbatim. */
  readonly evidence: string;
  /** Who resolves: a name given by the operator, else the identity that runs the action (the caller decides). */
  readonly by: string;
  /**
   * The identity that runs the action (the AWS caller ARN, or `<os user>@<hostname>`; the caller
   * resolves it), recorded beside `by` when it differs.
   */
  readonly actor?: string;
  /**
   * Resolve even when the provider's answer says otherwise, or cannot be had: the evidence then
   * stands against the provider's. Only for evidence that outweighs it (for FAILED, the provider's
   * written confirmation that it never executed the payout); the history records the override.
   */
  readonly force?: boolean;
}

export interface ResolveResult {
  readonly payout: Payout;
  /** The provider's answer at that moment, as recorded in history. */
  readonly providerAnswer: string;
  /** Whether --force overrode the provider's answer (or its absence). */
  readonly forced: boolean;
}

/** GetPayout's answer as one line for the audit trail, or why it could not be had. */
export async function askProvider(
  deps: Pick<OperatorDeps, 'provider' | 'credentials'>,
  identity: PayoutIdentity,
): Promise<{ answer?: PayoutStatusAnswer; line: string }> {
  try {
    const answer = await withCredentialRefresh(deps.credentials, (creds) => deps.provider.getPayout(identity, creds));
    return { answer, line: answer.found ? `${answer.status ?? '(no status)'} (${answer.outcome})` : `${NOT_FOUND_LINE} (the provider does not know this reference)` };
  } catch (error) {
    return { line: `unavailable: ${(error as Error).message}` };
  }
}

/** Why the provider's answer stands against the outcome, and what evidence would settle it. */
interface Disagreement {
  readonly why: string;
  readonly settledBy: string;
  /** What the forced entry's provider answer notes beside the override (the notifications that named it). */
  readonly noted?: string;
}

/**
 * Whether the provider's answer (and, on "not found" for --as failed, its stored notifications)
 * contradicts the outcome; undefined when it does not.
 */
async function disagreementOf(
  deps: OperatorDeps,
  payout: Payout,
  as: 'succeeded' | 'failed',
  answer: PayoutStatusAnswer | undefined,
  line: string,
): Promise<Disagreement | undefined> {
  if (answer === undefined) return { why: `the provider could not be asked (${line})`, settledBy: ASK_AGAIN };
  const status = answer.status ?? '';
  if (answer.found && as === 'failed') {
    if (answer.outcome === 'succeeded' || answer.outcome === 'reversed') return { why: `the provider says ${status}: the money was delivered`, settledBy: NEVER_EXECUTED_EVIDENCE };
    // FAILED is final and unwatched, and it allows a retry: not while the money may still move.
    if (answer.outcome !== 'failed') return { why: `the provider still holds it as ${status || '(no status)'}: it could still be delivered`, settledBy: NEVER_EXECUTED_EVIDENCE };
    return undefined;
  }
  if (answer.found) {
    if (answer.outcome === 'failed') return { why: `the provider says ${status}: the payout failed`, settledBy: CREDITED_EVIDENCE };
    if (answer.outcome === 'reversed') return { why: `the provider says ${status}: the money came back`, settledBy: CREDITED_EVIDENCE };
    // SUCCEEDED tells the business the beneficiary has the money: not while the provider has not said so.
    if (answer.outcome !== 'succeeded') return { why: `the provider still holds it as ${status || '(no status)'}: it is not delivered yet`, settledBy: CREDITED_EVIDENCE };
    return undefined;
  }
  if (as === 'succeeded') return { why: 'the provider does not know this payout: nothing shows it was paid', settledBy: CREDITED_EVIDENCE };
  // "Not found" for --as failed: any record of the provider's naming it says otherwise (rule 1).
  const notified = describeNotices(await noticesNaming(deps.notifications, payout.record.identity, payout.record.createdAt));
  if (notified !== undefined) {
    return {
      why: `GetPayout says it does not know it, but ${notified}, and it could still be delivered`,
      settledBy: NEVER_EXECUTED_EVIDENCE,
      noted: `${notified}; `,
    };
  }
  if (payout.acknowledged) {
    // "Not found" after the provider held the reference is a lagging or lost record, not a failure.
    const at = payout.record.acknowledgedAt ? ` at ${payout.record.acknowledgedAt}` : '';
    return { why: `the provider acknowledged it${at} and now says it does not know it: it could still be delivered`, settledBy: NEVER_EXECUTED_EVIDENCE };
  }
  if (payout.mayHaveReachedProvider) {
    // A call whose outcome was never known (a time-out, a crash): the provider may hold it and not show it yet.
    const intent = payout.record.submitIntentAt ? ` (intent to pay recorded at ${payout.record.submitIntentAt})` : '';
    return {
      why: `a Payout call for it may have reached the provider${intent} and its outcome was never known; "not found" alone does not show it failed: the provider's record may lag, and it could still be delivered`,
      settledBy: NEVER_EXECUTED_EVIDENCE,
    };
  }
  return undefined;
}

/**
 * An operator settles a NEEDS_REVIEW payout as SUCCEEDED or FAILED with evidence. GetPayout is asked
 * first: the provider saying delivered, or still holding the payout in any other state than failed,
 * refuses --as failed; so does "not found" when a stored signed notification names the payout, when
 * the provider acknowledged it, or when a Payout call may have reached it; saying failed refuses --as
 * succeeded; and no answer refuses both. The refusal says what evidence would settle it; `force`
 * resolves against the provider's answer on that evidence, and the history says so. The
 * write is conditional on the state and version read; history records who (and the identity that
 * ran it, when that differs), when, the evidence and the provider's answer.
 * @throws PayoutNotFoundError, InvalidOperatorInputError, OperatorActionRefusedError,
 *   ConcurrentModificationError (someone else moved it meanwhile: read it again)
 */
export async function resolvePayout(deps: OperatorDeps, request: ResolveRequest): Promise<ResolveResult> {
  const evidence = request.evidence.trim();
  const by = request.by.trim();
  if (evidence === '') throw new InvalidOperatorInputError('evidence is required: say what shows the outcome (e.g. a bank statement line or a provider ticket)');
  if (by === '') throw new InvalidOperatorInputError('who resolves must not be empty');
  const payout = await deps.repository.get(request.identity);
  if (!payout) throw new PayoutNotFoundError(`no payout ${request.identity.withdrawal_reference} for merchant ${request.identity.platform_merchant_id} in ${request.identity.currency}`);
  if (payout.state !== 'NEEDS_REVIEW') {
    throw new OperatorActionRefusedError(`payout ${request.identity.withdrawal_reference} is ${payout.state}; only a NEEDS_REVIEW payout can be resolved`, 'state');
  }

  const { answer, line } = await askProvider(deps, request.identity);
  const force = request.force === true;
  const disagreement = await disagreementOf(deps, payout, request.as, answer, line);
  if (disagreement && !force) {
    throw new OperatorActionRefusedError(`not resolved: ${disagreement.why}; ${disagreement.settledBy}`, 'provider', true);
  }

  const to = request.as === 'succeeded' ? 'SUCCEEDED' : 'FAILED';
  const providerAnswer = disagreement ? `${line}; ${disagreement.noted ?? ''}${OVERRIDDEN_WITH_FORCE}` : line;
  const who = operatorWho(by, request.actor);
  const next = payout.resolveByOperator(to, { ...who, evidence, providerAnswer }, deps.clock.now());
  await deps.repository.save(payout, next);
  countOutcome(deps.telemetry, next);
  if (disagreement) {
    deps.log.warn("payout resolved by an operator against the provider's answer (--force)", { payoutKey: next.key, to, why: disagreement.why });
  }
  deps.log.info('payout resolved by an operator', {
    payoutKey: next.key,
    withdrawalReference: request.identity.withdrawal_reference,
    to,
    ...who,
    providerAnswer,
    forced: disagreement !== undefined,
  });
  return { payout: next, providerAnswer, forced: disagreement !== undefined };
}
