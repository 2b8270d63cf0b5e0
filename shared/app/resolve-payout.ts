import type { PayoutIdentity } from '@shared/domain/identity';
import { operatorWho, type Payout } from '@shared/domain/payout';
import { InvalidOperatorInputError, OperatorActionRefusedError, PayoutNotFoundError } from './operator-errors';
import type { CredentialsSource, PayoutProvider, PayoutRepository, PayoutStatusAnswer } from '@shared/ports/payouts';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import { withCredentialRefresh } from './credential-refresh';
import { countOutcome } from './outcome-metrics';

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
}

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
  /** Resolve even when the provider's answer says otherwise, or cannot be had. */
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

/**
 * An operator settles a NEEDS_REVIEW payout as SUCCEEDED or FAILED with evidence. GetPayout is asked
 * first: the provider saying delivered, or still holding the payout in any other state than failed,
 * refuses --as failed; saying failed refuses --as succeeded; and no answer refuses both, unless `force` is given (the evidence then stands against the provider). The
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
  const disagreement =
    answer === undefined
      ? `the provider could not be asked (${line})`
      : answer.found && request.as === 'failed' && (answer.outcome === 'succeeded' || answer.outcome === 'reversed')
        ? `the provider says ${answer.status ?? ''}: the money was delivered`
        : answer.found && request.as === 'failed' && answer.outcome !== 'failed'
          ? // FAILED is final and unwatched, and it allows a retry: not while the money may still move.
            `the provider still holds it as ${answer.status || '(no status)'}: it could still be delivered`
        : answer.found && request.as === 'succeeded' && answer.outcome === 'failed'
          ? `the provider says ${answer.status ?? ''}: the payout failed`
        : answer.found && request.as === 'succeeded' && answer.outcome === 'reversed'
          ? `the provider says ${answer.status ?? ''}: the money came back`
        : answer.found && request.as === 'succeeded' && answer.outcome !== 'succeeded'
          ? // SUCCEEDED tells the business the beneficiary has the money: not while the provider has not said so.
            `the provider still holds it as ${answer.status || '(no status)'}: it is not delivered yet`
        : !answer.found && request.as === 'succeeded'
          ? `the provider does not know this payout: nothing shows it was paid`
        : !answer.found && request.as === 'failed' && payout.acknowledged
          ? // "Not found" after the provider held the reference is a lagging or lost record, not a failure.
            `the provider acknowledged it${payout.record.acknowledgedAt ? ` at ${payout.record.acknowledgedAt}` : ''} and now says it does not know it: it could still be delivered`
        : !answer.found && request.as === 'failed' && payout.mayHaveReachedProvider
          ? // A call whose outcome was never known (a time-out, a crash): the provider may hold it and not show it yet.
            `a Payout call for it may have reached the provider${payout.record.submitIntentAt ? ` (intent to pay recorded at ${payout.record.submitIntentAt})` : ''} and its outcome was never known; "not found" alone does not show it failed: the provider's record may lag, and it could still be delivered`
          : undefined;
  if (disagreement && !force) {
    throw new OperatorActionRefusedError(`not resolved: ${disagreement}`, 'provider', true);
  }

  const to = request.as === 'succeeded' ? 'SUCCEEDED' : 'FAILED';
  const providerAnswer = disagreement ? `${line}; ${OVERRIDDEN_WITH_FORCE}` : line;
  const who = operatorWho(by, request.actor);
  const next = payout.resolveByOperator(to, { ...who, evidence, providerAnswer }, deps.clock.now());
  await deps.repository.save(payout, next);
  countOutcome(deps.telemetry, next);
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
