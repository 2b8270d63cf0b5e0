import { maskAccount, maskAccountsInJsonText } from '@shared/domain/account';
import { InvalidPayoutIdentityError, type PayoutIdentity } from '@shared/domain/identity';
import { FINAL_STATES, operatorWho, type PayoutState } from '@shared/domain/payout';
import { DeadLetterNotFoundError, InvalidOperatorInputError } from './operator-errors';
import { payoutIdentityOf } from '@shared/messages/payout-request';
import { REDRIVE_RUN_ATTRIBUTE } from '@shared/messages/redrive';
import type { DeadLetter, DeadLetterQueue } from '@shared/ports/dead-letters';
import type { PayoutItemStore } from '@shared/ports/payouts';
import type { Log } from '@shared/ports/runtime';

/*
 * The payouts DLQ for a person: read it without consuming it, delete a message with a reason (logged),
 * and redrive it in a bounded way. The console and the CLI both call these use cases.
 */

export { REDRIVE_RUN_ATTRIBUTE };

/** A DLQ message as an operator sees it: nothing secret, account masked. */
export interface DeadLetterView {
  readonly id: string;
  readonly sentAt?: string;
  readonly receiveCount: number;
  readonly reason: string;
  /** The payout identity, when the body is a readable payout request (each part trimmed, as the worker reads it). */
  readonly identity?: { platform_merchant_id: string; currency: string; withdrawal_reference: string };
  readonly accountMasked?: string;
}

/** How long a peek hides the messages it read; they are released right after. */
const PEEK_HIDE_SECONDS = 30;
/** The most messages one listing reads. */
export const LIST_CAP = 1000;

/** A body string as the worker's schema reads it: trimmed; absent when empty. */
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/**
 * The body with its account numbers masked (maskAccountsInJsonText: the account, card and phone
 * members of a JSON body at any depth and in JSON documents its strings carry, every run of six
 * digits or more of a string holding JSON text it cannot read, and of a body that is not JSON); a
 * JSON object is pretty-printed.
 */
export function maskedBody(body: string): string {
  const masked = maskAccountsInJsonText(body);
  try {
    const parsed: unknown = JSON.parse(masked);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return JSON.stringify(parsed, null, 2);
  } catch {
    // not JSON, or too deep to print again: shown as masked
  }
  return masked;
}

/** What an operator may see of a message. */
export function viewOf(message: DeadLetter): DeadLetterView {
  let identity: DeadLetterView['identity'];
  let accountMasked: string | undefined;
  try {
    const b = JSON.parse(message.body) as Record<string, unknown>;
    const [platform_merchant_id, currency, withdrawal_reference] = [str(b.platform_merchant_id), str(b.currency), str(b.withdrawal_reference)];
    if (platform_merchant_id && currency && withdrawal_reference) identity = { platform_merchant_id, currency, withdrawal_reference };
    if (b.account_number !== undefined) accountMasked = maskAccount(String(b.account_number));
  } catch {
    // not JSON: no identity to show
  }
  const reason = message.attributes.reason ?? 'moved by the queue after too many receives; no reason recorded';
  return {
    id: message.id,
    ...(message.sentAt ? { sentAt: message.sentAt } : {}),
    receiveCount: message.receiveCount,
    reason,
    ...(identity ? { identity } : {}),
    ...(accountMasked ? { accountMasked } : {}),
  };
}

/**
 * Reads up to `cap` messages without consuming them: each receive hides what it read for
 * PEEK_HIDE_SECONDS so one pass never sees a message twice, and everything read is made visible
 * again before returning (even on failure). `stop` ends the pass early (a message was found).
 */
async function peek(dlq: DeadLetterQueue, cap: number, stop: (m: DeadLetter) => boolean = () => false): Promise<DeadLetter[]> {
  const seen = new Map<string, DeadLetter>();
  try {
    while (seen.size < cap) {
      const batch = await dlq.receive(Math.min(10, cap - seen.size), PEEK_HIDE_SECONDS);
      const fresh = batch.filter((m) => !seen.has(m.id));
      for (const m of batch) if (!seen.has(m.id)) seen.set(m.id, m);
      if (fresh.length === 0 || fresh.some(stop)) break;
    }
  } finally {
    await dlq.release([...seen.values()]);
  }
  return [...seen.values()];
}

/** Lists the DLQ (up to `cap` messages), oldest first, without consuming anything. */
export async function listDeadLetters(dlq: DeadLetterQueue, cap = LIST_CAP): Promise<DeadLetterView[]> {
  const messages = await peek(dlq, cap);
  return messages.map(viewOf).sort((a, b) => (a.sentAt ?? '').localeCompare(b.sentAt ?? ''));
}

/** One DLQ message with its body (account masked), without consuming it. */
export async function showDeadLetter(dlq: DeadLetterQueue, id: string): Promise<DeadLetterView & { body: string; attributes: Record<string, string> }> {
  const found = (await peek(dlq, Number.POSITIVE_INFINITY, (m) => m.id === id)).find((m) => m.id === id);
  if (!found) throw new DeadLetterNotFoundError(`no message ${id} in the dead-letter queue (it may be in flight, or already gone)`);
  return { ...viewOf(found), body: maskedBody(found.body), attributes: { ...found.attributes } };
}

/**
 * Deletes one DLQ message for good, with the operator's reason; the log line (who, the identity that
 * ran it when that differs, why, the payout it named) is the record of it.
 */
export async function deleteDeadLetter(
  deps: { dlq: DeadLetterQueue; log: Log },
  request: { id: string; reason: string; by: string; actor?: string },
): Promise<DeadLetterView> {
  if (request.reason.trim() === '') throw new InvalidOperatorInputError('a reason is required: say why this message can be dropped');
  const seen: DeadLetter[] = [];
  let found: DeadLetter | undefined;
  try {
    while (!found) {
      const batch = await deps.dlq.receive(10, PEEK_HIDE_SECONDS);
      const fresh = batch.filter((m) => !seen.some((s) => s.id === m.id));
      if (fresh.length === 0) break;
      seen.push(...fresh);
      found = fresh.find((m) => m.id === request.id);
    }
    if (!found) throw new DeadLetterNotFoundError(`no message ${request.id} in the dead-letter queue (it may be in flight, or already gone)`);
    await deps.dlq.delete(found);
  } finally {
    await deps.dlq.release(seen.filter((m) => m !== found));
  }
  const view = viewOf(found);
  deps.log.info('DLQ message deleted by an operator', { messageId: view.id, ...operatorWho(request.by, request.actor), deleteReason: request.reason.trim(), dlqReason: view.reason, ...view.identity });
  return view;
}

/**
 * A DLQ message the redrive left where it is because the payout it names is final or under review:
 * the worker stops at such a payout, so moving it would pay nothing, only empty the DLQ (and clear
 * its alarm) while the payout still needs a person. What to do depends on `state`.
 */
export interface HeldDeadLetter {
  readonly id: string;
  readonly identity: NonNullable<DeadLetterView['identity']>;
  readonly state: PayoutState;
  /** The payout's stored reason (why it is in that state), when it has one. */
  readonly payoutReason?: string;
}

/**
 * A DLQ message the redrive left where it is because reading the payout it names failed (a DynamoDB
 * error): whether that payout needs a person is unknown, so the message is neither moved nor held.
 * Run the redrive again once the table answers.
 */
export interface UnreadDeadLetter {
  readonly id: string;
  readonly identity: NonNullable<DeadLetterView['identity']>;
  /** Why the read failed (the error's message). */
  readonly error: string;
}

export interface RedriveReport {
  /** Messages in the DLQ when the run started (as SQS counts them). */
  readonly presentAtStart: number;
  /** Sent to the payouts queue and deleted from the DLQ. */
  readonly moved: number;
  /** Moved by this run and back in the DLQ when it ended (their cause is not fixed); left there. */
  readonly failedAgain: number;
  /**
   * Present at start but neither moved, held nor left unread: over `max`, or the payouts queue refused them; left in
   * the DLQ.
   */
  readonly skipped: number;
  /**
   * Left in the DLQ, not moved, because the payout each names is final or in NEEDS_REVIEW (looked up
   * only when the caller gave the payouts table); each needs a person, then `dlq delete`.
   */
  readonly held: readonly HeldDeadLetter[];
  /**
   * Left in the DLQ, not moved, because the payout each names could not be read (a table error): the
   * run went on with the other messages; run it again once the table answers.
   */
  readonly notLookedUp: readonly UnreadDeadLetter[];
  /** The marker on every message this run moved (message attribute REDRIVE_RUN_ATTRIBUTE). */
  readonly runId: string;
}

/** Messages of this run back in the DLQ now (a non-consuming pass). */
async function backInDlq(dlq: DeadLetterQueue, runId: string): Promise<number> {
  return (await peek(dlq, LIST_CAP)).filter((m) => m.attributes[REDRIVE_RUN_ATTRIBUTE] === runId).length;
}

/**
 * The payout a message names, when it is final or in NEEDS_REVIEW: a redelivery would change nothing
 * (the worker stops at any payout past verification), so the message is held in the DLQ. A message
 * that names no payout, or an identity that cannot be a payout key (the worker dead-letters such a
 * message again with its reason), or one not stored yet or still open, is moved as before. A read
 * that fails otherwise is `unread`: the message stays, and the run goes on with the others.
 */
async function heldBy(
  payouts: Pick<PayoutItemStore, 'get'> | undefined,
  message: DeadLetter,
): Promise<{ held: HeldDeadLetter } | { unread: UnreadDeadLetter } | undefined> {
  if (payouts === undefined) return undefined;
  // The identity the worker reads (trimmed, a valid key): the one its payout is stored under.
  let identity: PayoutIdentity | undefined;
  try {
    identity = payoutIdentityOf(JSON.parse(message.body));
  } catch {
    // not JSON: names no payout
  }
  if (identity === undefined) return undefined;
  let payout: Awaited<ReturnType<PayoutItemStore['get']>>;
  try {
    payout = await payouts.get(identity);
  } catch (error) {
    if (error instanceof InvalidPayoutIdentityError) return undefined;
    return { unread: { id: message.id, identity, error: error instanceof Error ? error.message : String(error) } };
  }
  if (payout === undefined || !FINAL_STATES.has(payout.state)) return undefined;
  return { held: { id: message.id, identity, state: payout.state, ...(payout.record.reason !== undefined ? { payoutReason: payout.record.reason } : {}) } };
}

/**
 * Moves DLQ messages back to the payouts queue, bounded: it handles only as many messages as were
 * present when it started (at most `max`), each at most once. With `payouts`, it first looks up the
 * payout each message names and holds in the DLQ those whose payout is final or in NEEDS_REVIEW
 * (reported in `held`, never moved: moving them would pay nothing and hide them from the DLQ alarm). Every moved message carries this run's
 * id; one that fails again comes back to the DLQ with it (the worker copies it) and is never moved a
 * second time by this run, so a poison message cannot loop. After moving, it watches the DLQ for up to
 * `waitMs` (less once the payouts queue is empty) and reports how many moved messages came back
 * ("failed again"). With `only`, it moves that one message (found by id) and leaves every other one
 * where it is; a message that is not there is DeadLetterNotFoundError. `actor`: the identity that ran
 * the redrive, carried by its log line.
 */
export async function redriveDeadLetters(
  deps: { dlq: DeadLetterQueue; log: Log; runId: string; actor?: string; payouts?: Pick<PayoutItemStore, 'get'>; sleep?: (ms: number) => Promise<void> },
  options: { max?: number; waitMs?: number; only?: string } = {},
): Promise<RedriveReport> {
  const { dlq, runId } = deps;
  const { only } = options;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const presentAtStart = await dlq.approximateCount();
  const budget = only !== undefined ? 1 : Math.min(presentAtStart, options.max ?? Number.POSITIVE_INFINITY);
  const handled = new Set<string>();
  const seen = new Set<string>();
  const keep: DeadLetter[] = [];
  const held: HeldDeadLetter[] = [];
  const notLookedUp: UnreadDeadLetter[] = [];
  let moved = 0;
  try {
    while (handled.size < budget) {
      // Looking for one message: receive full batches, since the others are only looked at.
      const batch = await dlq.receive(only !== undefined ? 10 : Math.min(10, budget - handled.size), PEEK_HIDE_SECONDS);
      const unseen = batch.filter((m) => !seen.has(m.id));
      for (const m of unseen) seen.add(m.id);
      const fresh = unseen.filter((m) => !handled.has(m.id) && m.attributes[REDRIVE_RUN_ATTRIBUTE] !== runId && (only === undefined || m.id === only));
      keep.push(...batch.filter((m) => !fresh.includes(m)));
      if (fresh.length === 0 && (only === undefined || unseen.length === 0)) break;
      for (const message of fresh) {
        handled.add(message.id);
        const looked = await heldBy(deps.payouts, message);
        if (looked !== undefined && 'held' in looked) {
          held.push(looked.held);
          keep.push(message);
        } else if (looked !== undefined) {
          notLookedUp.push(looked.unread);
          keep.push(message);
        } else if (await dlq.sendToPayouts(message, { [REDRIVE_RUN_ATTRIBUTE]: runId })) {
          await dlq.delete(message);
          moved += 1;
        } else keep.push(message);
      }
    }
  } finally {
    await dlq.release(keep);
  }
  if (only !== undefined && moved === 0 && !handled.has(only)) {
    throw new DeadLetterNotFoundError(`no message ${only} in the dead-letter queue (it may be in flight, or already gone)`);
  }
  let failedAgain = await backInDlq(dlq, runId);
  const waitUntil = Date.now() + (options.waitMs ?? 0);
  // Watch until every moved message is back, or the payouts queue is empty (the rest were processed), or time is up.
  while (failedAgain < moved && Date.now() < waitUntil) {
    await sleep(Math.min(1000, Math.max(0, waitUntil - Date.now())));
    const drained = (await dlq.payoutsQueueCount()) === 0;
    failedAgain = await backInDlq(dlq, runId);
    if (drained) break;
  }
  const report: RedriveReport = {
    presentAtStart,
    moved,
    failedAgain,
    skipped: Math.max(0, presentAtStart - moved - held.length - notLookedUp.length),
    held,
    notLookedUp,
    runId,
  };
  deps.log.info('DLQ redrive finished', { ...report, held: held.length, notLookedUp: notLookedUp.map((u) => ({ id: u.id, ...u.identity, error: u.error })), ...(deps.actor !== undefined ? { actor: deps.actor } : {}) });
  return report;
}
