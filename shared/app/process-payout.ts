import type { PayoutIdentity } from '@shared/domain/identity';
import { checkName, normalizeName } from '@shared/domain/name-policy';
import { Payout, SUBMITTED_CHECK_SECONDS } from '@shared/domain/payout';
import { acceptRequest, fieldsDifferingFromStored, requestIdentity, type PayoutRequest } from '@shared/messages/payout-request';
import {
  redact,
  ProviderAmbiguousError,
  ProviderError,
  ProviderRejectedError,
  ProviderUnauthorizedError,
  ProviderUnavailableError,
} from '@shared/providers/provider-errors';
import { isDefiniteRefusal, type DefiniteRefusal } from '@shared/domain/definite-refusals';
import { METRIC } from '@shared/observability/metric-names';
import { withCredentialRefresh } from './credential-refresh';
import { countOutcome } from './outcome-metrics';
import { ConcurrentModificationError } from '@shared/domain/errors';
import type { Clock, Log, Telemetry } from '@shared/ports/runtime';
import type { AccountFingerprints, CredentialsSource, KycApproval, PayoutCheckQueue, PayoutItemStore, PayoutProvider, ProviderCredentials } from '@shared/ports/payouts';

/**
 * The provider could not be reached (or refused our keys even after a refresh) before anything was
 * accepted: the message should be delivered again later. The worker reports it as a batch item failure.
 */
export class RetryLaterError extends Error {
  override name = 'RetryLaterError';
  /**
   * @param retryAfterMs the provider's Retry-After (429 or 503), if it gave one: the worker delays the
   *   message's next delivery by at least this much instead of the queue's visibility time-out
   */
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * The provider secret read again after a 401 names another merchant than the payout: Payout would
 * send the money from that merchant, so the call is not made (treated as "not sent").
 */
class MerchantChangedError extends Error {
  override name = 'MerchantChangedError';
}

/**
 * What the provider answered, for a reason stored on the payout (and on its DLQ message) that an
 * operator reads: the HTTP status and the provider's own words, or the network failure, instead of
 * an error class name, which says nothing about what happened. The words are already redacted by
 * the client (no keys, no full account numbers) and are redacted and bounded again here, and every
 * character SQS refuses in an attribute value, and every control but tab and newline, becomes '?'.
 * Any other failure is named by its class only: its message may carry anything.
 */
export function providerAnswerOf(error: unknown): string {
  return inertText(answerOf(error));
}

function answerOf(error: unknown): string {
  if (error instanceof MerchantChangedError) return error.message;
  if (!(error instanceof ProviderError)) return error instanceof Error ? error.name : 'an unexpected failure';
  const words = error.providerMessage ? `: "${redact(error.providerMessage)}"` : '';
  if (error.httpStatus !== undefined) return `HTTP ${error.httpStatus}${words}`;
  const network = error.code === 'PROVIDER_TIMEOUT' ? 'time-out' : (error.code ?? 'network failure');
  return error.kind === 'unavailable' ? `the provider could not be reached (${network})` : `no answer from the provider (${network})`;
}

/**
 * Every character SQS refuses in a message attribute value (outside #x9 | #xA | #xD | #x20-#xD7FF |
 * #xE000-#xFFFD | #x10000-#x10FFFF: lone surrogates, U+FFFE, U+FFFF, C0 controls), and every other
 * C0 or C1 control but tab and newline (CR, DEL, U+0080-U+009F: a terminal escape is inert text).
 */
const NOT_INERT = /[^\t\n\x20-\x7E\xA0-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * The text with each character a reason must not carry replaced by '?', so the worker's DLQ send
 * (the reason is a message attribute) never fails on it and no reader's terminal acts on it.
 */
function inertText(text: string): string {
  return text.replace(NOT_INERT, '?');
}

/**
 * The reason of a payout whose account the provider refused at AccountVerification: the provider's
 * words as every reason quotes them, redacted, bounded and inert (the REJECTED payout keeps it).
 */
export function verificationRefusal(error: ProviderRejectedError): string {
  return `account verification refused: ${inertText(redact(error.providerMessage ?? error.message))}`;
}

/** The provider's Retry-After carried by a failure, if any. */
function retryAfterOf(error: unknown): number | undefined {
  return error instanceof ProviderError ? error.retryAfterMs : undefined;
}

export interface ProcessPayoutSettings {
  /** Name policy threshold in [0, 1] (NAME_MATCH_THRESHOLD). */
  readonly nameMatchThreshold: number;
  /** KYC_GATING: when on, a request with a user_reference is paid only for an approved subject. */
  readonly kycGating: boolean;
  /** PAYOUT_DEFINITE_REFUSALS: refusals known to be final (FAILED at once); empty by default. */
  readonly definiteRefusals?: readonly DefiniteRefusal[];
}

export interface ProcessPayoutDeps {
  readonly repository: PayoutItemStore;
  readonly provider: PayoutProvider;
  readonly credentials: CredentialsSource;
  /** Each new payout stores its account's fingerprint; a request for a stored payout must match it. */
  readonly fingerprints: AccountFingerprints;
  /** Required when settings.kycGating is on. */
  readonly kyc?: KycApproval;
  /** The checks queue: the first delayed check of each submitted payout. Without it, the sweep finds it. */
  readonly checks?: PayoutCheckQueue;
  readonly clock: Clock;
  readonly telemetry: Telemetry;
  readonly log: Log;
  readonly settings: ProcessPayoutSettings;
}

/**
 * What happened to one payout request. `skipped`: nothing to do without risking a second payment.
 * `conflict`: the request does not match the stored payout of its identity; it changed nothing and
 * belongs in the DLQ for a person.
 */
export interface ProcessPayoutResult {
  readonly outcome: 'rejected' | 'submitted' | 'unknown' | 'failed' | 'skipped' | 'conflict';
  readonly state: Payout['state'];
  readonly reason?: string;
}

/** Resolves on the next turn of the event loop, after the I/O that is ready (requests waiting for a socket). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Words of a verification refusal that are about the beneficiary's account, not about the request. */
const ACCOUNT_WORDS = /\b(account|beneficiary|recipient|wallet|holder|number)\b/i;

/**
 * Whether AccountVerification refused the account itself, which makes the payout REJECTED for good:
 * words naming the account ("account not found", "invalid account number"), or the documented
 * answer's own `success: false` with no words at all. Any other refusal ("invalid signature", "missing
 * field", a 404 of a wrong path) is about how payrelay asked: nothing was paid, so the message is
 * retried, and a refusal that never passes ends in the DLQ with the provider's words, then at the
 * review deadline in NEEDS_REVIEW, instead of turning every payout REJECTED on a setup mistake.
 */
function refusesTheAccount(error: ProviderRejectedError): boolean {
  const words = error.providerMessage?.trim() ?? '';
  if (words === '') return error.httpStatus !== undefined && error.httpStatus >= 200 && error.httpStatus < 300;
  return ACCOUNT_WORDS.test(words);
}

/** A verification under way: the verified name, or why the payout is refused. */
type Verification = Promise<{ verifiedName?: string; rejection?: string }>;

/** How many times one request re-reads the payout after losing a conditional write. */
const MAX_ROUNDS = 5;

/**
 * The worker's use case: create the payout with the intent to pay (SUBMITTING) while the account is
 * verified, apply the name policy and KYC gating, call Payout once and record the outcome. Safe to run
 * for the same request any number of times, concurrently: every step is a conditional write, and
 * Payout is called only by whoever wrote the intent (money-safety rule 1), and only after the
 * verification passed; a refused intent is withdrawn, one whose verification could not complete is
 * released for the retry.
 * @throws RetryLaterError when the provider was unavailable before anything was accepted
 */
export function createProcessPayout(deps: ProcessPayoutDeps): (request: PayoutRequest) => Promise<ProcessPayoutResult> {
  const { repository, provider, credentials, fingerprints, clock, telemetry, log, settings } = deps;
  if (settings.kycGating && !deps.kyc) throw new Error('KYC gating is on but no KYC approval reader was given');

  async function save(previous: Payout, next: Payout): Promise<Payout> {
    const saved = await repository.save(previous, next);
    if (saved.state !== previous.state) {
      log.info('payout transition', { payoutKey: saved.key, from: previous.state, to: saved.state, reason: saved.record.reason });
    }
    return saved;
  }

  /** Refuses a payout no intent was written for (misrouted), conditional on the stored version. */
  async function reject(payout: Payout, reason: string): Promise<ProcessPayoutResult> {
    const saved = await save(payout, payout.reject(reason, clock.now()));
    countOutcome(telemetry, saved);
    return { outcome: 'rejected', state: saved.state, reason };
  }

  /**
   * Verification, name policy and KYC; returns the verified name, or a rejection reason. The
   * AccountVerification request is sent before this returns its promise.
   * @param checked the credentials this request was checked against
   */
  async function verify(request: PayoutRequest, checked: ProviderCredentials): Verification {
    let answer;
    try {
      answer = await withCredentialRefresh(
        credentials,
        (creds) =>
          provider.verifyAccount(
            { account_number: request.account_number, account_code: request.account_code, currency: request.currency },
            creds,
          ),
        checked,
      );
    } catch (error) {
      if (error instanceof ProviderRejectedError && refusesTheAccount(error)) {
        return { rejection: verificationRefusal(error) };
      }
      // Nothing has been paid yet, so any other failure of verification is safe to retry.
      throw new RetryLaterError(`account verification did not complete: ${providerAnswerOf(error)}`, retryAfterOf(error));
    }
    const verifiedName = answer.data?.account_name?.trim();
    if (!answer.success || !verifiedName) {
      return { rejection: `account not found: ${answer.message ?? 'no account name returned'}` };
    }
    if (request.expected_name !== undefined) {
      const check = checkName(request.expected_name, verifiedName, settings.nameMatchThreshold);
      if (!check.matches) {
        telemetry.count(METRIC.nameMismatch);
        return {
          verifiedName,
          rejection: `name mismatch: expected "${request.expected_name}", account holder "${verifiedName}" (score ${check.score.toFixed(2)} < ${check.threshold})`,
        };
      }
    }
    if (settings.kycGating && request.user_reference !== undefined && deps.kyc) {
      let decision: 'approved' | 'not_approved';
      try {
        decision = await deps.kyc.check(request.user_reference);
      } catch (error) {
        // "Could not ask" is neither approved nor refused: nothing was paid, so try again later.
        throw new RetryLaterError(`KYC approval could not be checked: ${providerAnswerOf(error)}`, retryAfterOf(error));
      }
      if (decision !== 'approved') return { verifiedName, rejection: 'KYC not approved for this user_reference' };
    }
    return { verifiedName };
  }

  /**
   * @returns the verification, marked handled so that one nobody ends up awaiting (its intent write
   *   lost to another delivery, or the payout was already past it) never becomes an unhandled
   *   rejection; whoever awaits it still sees the error
   */
  function started(verification: Verification): Verification {
    verification.catch(() => undefined);
    return verification;
  }

  /**
   * Records the outcome of the Payout call on the intent this call wrote. Meanwhile another writer
   * may have bumped the version without moving the state (the reconciler rescheduling its look at a
   * fresh SUBMITTING, or recording "not found" for a resubmission in flight, which stays UNKNOWN; an
   * order notification making it due): the outcome still belongs to that intent while the payout is
   * in the intent's state with the same attempt count (no other call can have been authorized
   * since: a token is spent by the intent, and a new one needs a whole grace period of "not found"),
   * so it is applied to the fresh version. Losing it would lose the acceptance, the one fact that
   * stops a later resubmission. Once anything else moved the state, reconciliation owns the payout
   * and the error propagates.
   */
  async function saveOutcome(intent: Payout, outcome: (current: Payout, now: Date) => Payout): Promise<Payout> {
    let current = intent;
    for (let round = 1; ; round++) {
      try {
        return await save(current, outcome(current, clock.now()));
      } catch (error) {
        if (!(error instanceof ConcurrentModificationError) || round >= MAX_ROUNDS) throw error;
        const fresh = await repository.get(intent.record.identity);
        const sameIntent = fresh?.state === intent.state && fresh.record.submitAttempts === intent.record.submitAttempts;
        if (!fresh || !sameIntent) throw error;
        current = fresh;
      }
    }
  }

  /**
   * Asks for the first delayed check of a payout whose Payout call is on its way,
   * SUBMITTED_CHECK_SECONDS[0] after its intent, for the version the outcome's write creates. Sent
   * beside the call, on the next turn of the event loop (after the batch's other Payout requests have
   * left), so neither the call nor the outcome's write waits for it. If the write lands on another
   * version, or the outcome is final (a definite refusal), the check finds the payout stale and does
   * nothing; the sweep looks at an open one when due. A send that fails costs time, never the payout.
   */
  async function scheduleFirstCheck(intent: Payout): Promise<void> {
    if (!deps.checks) return;
    const at = Date.parse(intent.record.submitIntentAt ?? clock.now().toISOString()) + SUBMITTED_CHECK_SECONDS[0] * 1000;
    try {
      await deps.checks.schedule(intent.record.identity, intent.version + 1, Math.max(0, (at - clock.now().getTime()) / 1000));
    } catch (error) {
      log.warn('first check not scheduled; the scheduled sweep will look at the payout', { payoutKey: intent.key, error: (error as Error).name });
    }
  }

  /**
   * Calls Payout for a payout whose intent this call has just written, and records the outcome.
   * @param checked the credentials this request was checked against (the call goes out at once)
   * @param verifiedName the account holder's name, when the intent was written before the
   *   verification answered: the outcome's write (or the retry token's) records it
   */
  async function pay(intent: Payout, request: PayoutRequest, checked: ProviderCredentials, verifiedName?: string): Promise<ProcessPayoutResult> {
    const named = (current: Payout): Payout => (verifiedName === undefined ? current : current.withVerifiedName(verifiedName));
    const body = {
      amount: request.amount,
      account_number: request.account_number,
      account_code: request.account_code,
      currency: request.currency,
      withdrawal_reference: request.withdrawal_reference,
    };
    let next: (current: Payout, now: Date) => Payout;
    let outcome: ProcessPayoutResult['outcome'];
    // A Retry-After on the answer: GetPayout is not asked before it.
    const notBefore = (error: unknown, now: Date): Date | undefined => {
      const ms = retryAfterOf(error);
      return ms === undefined ? undefined : new Date(now.getTime() + ms);
    };
    const call = withCredentialRefresh(
      credentials,
      (creds) => {
        if (creds.platformMerchantId !== request.platform_merchant_id) {
          throw new MerchantChangedError("the provider secret no longer names this payout's merchant");
        }
        return provider.payout(body, creds);
      },
      checked,
    );
    const firstCheck = nextTurn().then(() => scheduleFirstCheck(intent));
    try {
      const answer = await call;
      if (answer.success === true) {
        next = (current, now) => current.submitted(answer.data?.status, now);
        outcome = 'submitted';
      } else {
        // Rule 2: only an explicit acceptance is one. Anything else is settled through GetPayout.
        next = (current, now) => current.unknown('provider answered Payout without an explicit acceptance (success: true)', now);
        outcome = 'unknown';
      }
    } catch (error) {
      if (error instanceof ProviderUnavailableError || error instanceof ProviderUnauthorizedError || error instanceof MerchantChangedError) {
        // Nothing reached the provider (or it refused our keys twice, or the keys now belong to another
        // merchant): leave a one-time retry token on SUBMITTING and let SQS deliver the message again.
        // See docs/payouts.md.
        const why = `payout call not sent: ${providerAnswerOf(error)}`;
        await saveOutcome(intent, (current, now) => named(current).submitNotSent(now, why));
        await firstCheck;
        throw new RetryLaterError(why, retryAfterOf(error));
      }
      if (error instanceof ProviderRejectedError && !error.duplicateReference && isDefiniteRefusal(settings.definiteRefusals ?? [], error)) {
        next = (current, now) => current.failed(`provider refused the payout (a definite refusal): ${error.providerMessage ?? ''}`, now);
        outcome = 'failed';
      } else if (error instanceof ProviderRejectedError || (error instanceof ProviderAmbiguousError && error.httpStatus === 429)) {
        // Rule 2: a provider may refuse after it committed the payout, in any words. UNKNOWN with the
        // provider's words, checked through GetPayout (not before a Retry-After); FAILED only if
        // GetPayout says so. A rate limit (429) is a refusal like any other: never a blind second call.
        const words = error.providerMessage ? `"${error.providerMessage}"` : 'no message';
        const duplicate = error instanceof ProviderRejectedError && error.duplicateReference;
        const why = duplicate
          ? `provider reports a duplicate withdrawal_reference (HTTP ${error.httpStatus ?? '?'}: ${words})`
          : `provider refused the payout (HTTP ${error.httpStatus ?? '?'}: ${words}); settled through GetPayout`;
        next = (current, now) => current.refused(why, now, { acknowledged: duplicate, notBefore: notBefore(error, now) });
        outcome = 'unknown';
      } else {
        // Rule 2: ambiguous (time-out, reset, 5xx, unparseable), or anything unexpected after the
        // request may have left: UNKNOWN, resolved by GetPayout, never retried blind.
        const why =
          error instanceof ProviderAmbiguousError
            ? `ambiguous payout outcome: ${error.message}`
            : `unexpected error after the payout call: ${(error as Error).name}`;
        next = (current, now) => current.unknown(why, now, notBefore(error, now));
        outcome = 'unknown';
      }
    }
    const saved = await saveOutcome(intent, (current, now) => next(named(current), now));
    await firstCheck;
    countOutcome(telemetry, saved);
    return { outcome, state: saved.state, reason: saved.record.reason };
  }

  /**
   * Settles an intent this call wrote beside the verification: Payout only once the verification,
   * the name policy and KYC all passed. The writer knows no Payout call was made before that, so a
   * refusal withdraws the intent (REJECTED) and a verification that could not complete releases it
   * with a retry token (nothing sent) before the message is retried. Both writes follow the
   * outcome's "same intent" rule (saveOutcome), and are made only on those unhappy paths.
   */
  async function settleIntent(intent: Payout, request: PayoutRequest, creds: ProviderCredentials, verification: Verification): Promise<ProcessPayoutResult> {
    let verdict: Awaited<Verification>;
    try {
      verdict = await verification;
    } catch (error) {
      const why = error instanceof RetryLaterError ? error.message : `account verification failed: ${(error as Error).name}`;
      await saveOutcome(intent, (current, now) => current.submitNotSent(now, `${why}; intent released, no Payout call sent`));
      throw error;
    }
    if (verdict.rejection !== undefined) return withdraw(intent, verdict.rejection, verdict.verifiedName);
    return pay(intent, request, creds, verdict.verifiedName);
  }

  /** Withdraws an intent no Payout call was made for (see settleIntent): REJECTED with the refusal. */
  async function withdraw(intent: Payout, rejection: string, verifiedName?: string): Promise<ProcessPayoutResult> {
    const saved = await saveOutcome(intent, (current, now) => current.withdrawIntent(rejection, now, verifiedName ? { verifiedName } : {}));
    countOutcome(telemetry, saved);
    return { outcome: 'rejected', state: saved.state, reason: rejection };
  }

  /**
   * @param early a verification already under way for this request (started beside the create, so
   *   the two round trips overlap); used once, before verification or for a retry token, and only for
   *   the payout it was started for
   */
  async function advance(payout: Payout, request: PayoutRequest, creds: ProviderCredentials, early?: Verification): Promise<ProcessPayoutResult> {
    const beforeVerification = payout.state === 'ACCEPTED' || payout.state === 'VERIFYING';
    // payrelay pays only from the merchant of its own provider secret.
    if (beforeVerification && request.platform_merchant_id !== creds.platformMerchantId) {
      return reject(payout, "misrouted: platform_merchant_id is not this deployment's merchant");
    }
    if (beforeVerification) {
      // A payout recorded ACCEPTED (by `payouts enqueue`), or left VERIFYING: the intent is written
      // beside the verification, as the worker's create is, with both transitions in its history when
      // it passes through VERIFYING. The write is conditional on the stored version, so of two
      // deliveries only one goes on; Payout still waits for the verdict (settleIntent).
      const verification = early ?? started(verify(request, creds));
      const verifying = payout.state === 'ACCEPTED' ? payout.startVerifying(clock.now()) : payout;
      const intent = await save(payout, verifying.startSubmitting(clock.now()));
      return settleIntent(intent, request, creds, verification);
    }
    if (payout.maySubmit && request.platform_merchant_id !== creds.platformMerchantId) {
      // The provider secret names another merchant since this payout was verified: Payout would send
      // the money from that merchant. Nothing is paid; a person restores the secret and redrives.
      log.error('retry of a payout names another merchant than the provider secret now; not paid', { payoutKey: payout.key, state: payout.state });
      return { outcome: 'conflict', state: payout.state, reason: "platform_merchant_id is no longer this deployment's merchant (the provider secret changed); not paid" };
    }
    if (payout.maySubmit) {
      // A one-time token: a retry after "not sent", or a resubmission the reconciler authorized.
      // The account passed the comparison above (by fingerprint, or by mask for a payout stored without
      // one); verify again all the same and insist on the same holder.
      const verdict = await (early ?? verify(request, creds));
      const stored = payout.record.verifiedName;
      if (verdict.rejection !== undefined && stored === undefined && payout.state === 'SUBMITTING') {
        // An intent released before its verification ever answered: this is that payout's first
        // verdict, and no Payout call was made (the token says so). Refused: withdraw it.
        return withdraw(payout, verdict.rejection, verdict.verifiedName);
      }
      if (verdict.rejection !== undefined || (stored !== undefined && normalizeName(stored) !== normalizeName(verdict.verifiedName ?? ''))) {
        log.error('retry of a payout does not verify as the same account; not paid', { payoutKey: payout.key, state: payout.state });
        return { outcome: 'conflict', state: payout.state, reason: 'retry does not verify as the account of the first attempt' };
      }
      const intent = await save(payout, payout.startSubmitting(clock.now(), stored === undefined ? verdict.verifiedName : undefined));
      return pay(intent, request, creds);
    }
    // SUBMITTING, SUBMITTED, UNKNOWN or final: only reconciliation moves it on (rule 1).
    return { outcome: 'skipped', state: payout.state, reason: 'payout already past verification' };
  }

  return async function processPayout(request) {
    const identity = requestIdentity(request);
    // Both cached after the first payout of an instance; read side by side on the first.
    const [current, accountFingerprint] = await Promise.all([credentials.get(), fingerprints.of(request)]);
    let creds = current;
    if (request.platform_merchant_id !== creds.platformMerchantId) {
      // The merchant may have changed a moment ago (`payrelay secrets put provider`) while the cache
      // still holds the old secret: one fresh read before anything is refused as misrouted for good.
      creds = await credentials.get({ forceFetch: true });
    }
    const now = clock.now();
    // AccountVerification only reads at the provider, so it runs beside the create instead of after
    // it: one round trip less per payout. A misrouted request is refused without asking.
    let early = request.platform_merchant_id === creds.platformMerchantId ? started(verify(request, creds)) : undefined;
    // The verification request is handed to its socket only on a later tick; the create's own work
    // (the SDK builds and signs it) waits for the next turn of the event loop, so that in a batch
    // every AccountVerification leaves before the creates are built instead of after all of them.
    if (early) await nextTurn();
    // One conditional write records ACCEPTED, VERIFYING and, when a verification is under way, the
    // intent to pay (SUBMITTING): the intent is then no write in line after the verification's
    // answer, and Payout waits for both (settleIntent). A misrouted request is created VERIFYING.
    const verifying = acceptRequest(request, now, { accountFingerprint }).startVerifying(now);
    const { created, payout: stored } = await repository.createAccepted(early ? verifying.startSubmitting(now) : verifying);
    let payout = stored;
    if (!created) {
      const differ = fieldsDifferingFromStored(payout, request, accountFingerprint);
      if (differ.length > 0) {
        log.error('payout request conflicts with the stored payout of the same identity; not applied', {
          payoutKey: payout.key,
          state: payout.state,
          differ,
        });
        return {
          outcome: 'conflict',
          state: payout.state,
          reason: `${differ.join(', ')} ${differ.length === 1 ? 'differs' : 'differ'} from the stored payout of this identity`,
        };
      }
    }
    // The intent this call just created: its verification is the one under way.
    let own = created && early !== undefined;
    for (let round = 1; ; round++) {
      try {
        return await (own && early ? settleIntent(payout, request, creds, early) : advance(payout, request, creds, early));
      } catch (error) {
        if (!(error instanceof ConcurrentModificationError) || round >= MAX_ROUNDS) throw error;
        const fresh = await repository.get(identity);
        if (!fresh) throw error;
        payout = fresh;
        early = undefined;
        own = false;
      }
    }
  };
}

/**
 * Records an invalid payout request as REJECTED with its reason, when no payout exists for its
 * identity. Returns false when one exists (the caller sends the message to the DLQ instead: the
 * stored payout is never touched by a message that failed validation).
 */
export function createRejectInvalidRequest(
  deps: Pick<ProcessPayoutDeps, 'repository' | 'clock' | 'telemetry' | 'log'>,
): (identity: PayoutIdentity, reason: string) => Promise<boolean> {
  return async (identity, reason) => {
    const now = deps.clock.now();
    // The amount and account of an invalid message are not trusted, so none are recorded. Created
    // straight in REJECTED (both transitions in its history): one conditional write.
    const accepted = Payout.accept({ identity, amount: '', accountMasked: '', accountCode: '' }, now);
    const { created, payout: saved } = await deps.repository.createAccepted(accepted.reject(`invalid payout request: ${reason}`, now));
    if (!created) return false;
    countOutcome(deps.telemetry, saved);
    deps.log.warn('invalid payout request recorded as REJECTED', { payoutKey: saved.key, reason });
    return true;
  };
}
