import { randomUUID } from 'node:crypto';
import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { REDRIVE_RUN_ATTRIBUTE, deleteDeadLetter, listDeadLetters, redriveDeadLetters, showDeadLetter, type DeadLetterView, type RedriveReport } from '@shared/app/dead-letters';
import { confirmPage, csrfField, donePage, page, table, withQuery, type Html, type PageContext } from '../layout';
import { blankAsAbsent, formStep, optionalText, parseInput, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { consoleLog } from '../log';

/** Messages one DLQ page reads (oldest first); the CLI's `dlq list --limit` reads more. */
const LISTED = 200;
const REASON_MAX = 1000;
const WHO_MAX = 200;

const payoutLink = (v: DeadLetterView): unknown =>
  v.identity
    ? html`<a href="${withQuery('/payouts', { reference: v.identity.withdrawal_reference, merchant: v.identity.platform_merchant_id })}">${v.identity.withdrawal_reference}</a> <span class="reason">${v.identity.platform_merchant_id}, ${v.identity.currency}</span>`
    : undefined;

/**
 * DLQ: the messages with why each is there, the payout each names and its masked account. Reading
 * consumes nothing (each message is hidden a moment, then released), as `payrelay dlq list`.
 */
export async function dlqPage(ctx: PageContext, services: ConsoleServices): Promise<Html> {
  const [views, depth] = await Promise.all([listDeadLetters(services.dlq, LISTED), services.dlqDepth()]);
  return page(
    ctx,
    'Dead-letter queue',
    '/dlq',
    html`<p class="hint">Payout requests the worker could not process, with the reason it gave. Reading them here consumes nothing (each read adds one to its receive count). Redrive sends a message back to the payouts queue; it is safe for money: the worker never pays a payout twice, however often its message arrives.</p>
<p><span id="dlq-count">${views.length}</span> message(s) shown${depth > views.length ? html` of about ${depth}` : ''}. <a href="/dlq/redrive" id="redrive-all">Redrive all…</a></p>
${table(
  ['id', 'first sent', 'receives', 'reason', 'payout', 'account', ''],
  views.map((v) => [
    html`<a href="${withQuery('/dlq/view', { id: v.id })}">${v.id}</a>`,
    v.sentAt,
    v.receiveCount,
    v.reason,
    payoutLink(v),
    v.accountMasked === undefined ? undefined : html`<span class="nowrap">${v.accountMasked}</span>`,
    html`<a href="${withQuery('/dlq/redrive', { id: v.id })}" class="redrive">redrive…</a> <a href="${withQuery('/dlq/delete', { id: v.id })}" class="delete">delete…</a>`,
  ]),
  'the dead-letter queue is empty',
)}`,
  );
}

const idQuery = v.object({ id: requiredText(512) });

/** One DLQ message: reason, attributes, and its body with the account number masked; consumes nothing. */
export async function dlqMessagePage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { id } = parseInput(idQuery, query);
  const shown = await showDeadLetter(services.dlq, id);
  return page(
    ctx,
    'DLQ message',
    '/dlq',
    html`${table(
      ['field', 'value'],
      [
        ['id', shown.id],
        ['first sent', shown.sentAt],
        ['receives', shown.receiveCount],
        ['reason', shown.reason],
        ['payout', payoutLink(shown)],
        ['account', shown.accountMasked],
        ...Object.entries(shown.attributes).map(([name, value]) => [`attribute ${name}`, value]),
      ],
    )}
<h2>Body</h2>
<pre class="body" id="dlq-body">${shown.body}</pre>
<p><a href="${withQuery('/dlq/redrive', { id })}">Redrive this message…</a> · <a href="${withQuery('/dlq/delete', { id })}">Delete it…</a></p>`,
  );
}

const redriveQuery = v.object({ id: optionalText(512) });

/** The redrive form: one message (by id) or every message present now, optionally at most n. */
export function redriveFormPage(ctx: PageContext, query: unknown): Html {
  const { id } = parseInput(redriveQuery, query);
  return page(
    ctx,
    id ? 'Redrive one message' : 'Redrive the DLQ',
    '/dlq',
    html`<p class="hint">${id ? `Move message ${id} back to the payouts queue.` : 'Move the messages present now back to the payouts queue, each at most once.'} A message that fails again comes back to the DLQ marked with the run's id and is not moved again by that run, so a poison message cannot loop. Nothing moves until you confirm on the next page.</p>
<form method="post" action="${withQuery('/dlq/redrive', { id })}" class="action redrive">
  ${csrfField(ctx)}
  ${id ? '' : html`<label>How many at most (empty: all of them) <input name="max" inputmode="numeric"></label>`}
  <button type="submit">Redrive…</button>
</form>`,
  );
}

const redriveForm = v.object({
  max: blankAsAbsent(
    v.pipe(v.unknown(), v.transform(Number), v.number('must be a whole number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(10_000, 'must be at most 10000')),
  ),
  step: formStep,
});

const REDRIVE_LABELS: FieldLabels = { max: 'How many at most' };

/** The payouts of held messages for the done page: the first HELD_NAMED, then how many more. */
const HELD_NAMED = 20;
function heldText(held: RedriveReport['held']): string {
  const named = held.slice(0, HELD_NAMED).map((h) => `${h.identity.withdrawal_reference}: ${h.state}`).join(', ');
  return held.length > HELD_NAMED ? `${named} and ${held.length - HELD_NAMED} more` : named;
}

/** Redrive, step 1 (what will move) or step 2 (the CLI's bounded use case, redriveDeadLetters). */
export async function redriveAction(ctx: PageContext, services: ConsoleServices, query: unknown, form: unknown): Promise<Html> {
  const { id } = parseInput(redriveQuery, query);
  const input = parseInput(redriveForm, form, REDRIVE_LABELS);
  const action = withQuery('/dlq/redrive', { id });
  if (input.step === 'review') {
    const present = await services.dlqDepth();
    return confirmPage(ctx, id ? 'Redrive this message?' : 'Redrive the DLQ?', '/dlq', {
      action,
      what: id
        ? `Send message ${id} back to the payouts queue and delete it from the DLQ.`
        : `Send ${input.max !== undefined ? `at most ${input.max} of ` : ''}the ${present} message(s) in the DLQ now back to the payouts queue, each at most once.`,
      fields: input.max !== undefined ? { max: String(input.max) } : {},
      labels: REDRIVE_LABELS,
      cancel: '/dlq',
    });
  }
  const report = await redriveDeadLetters(
    { dlq: services.dlq, payouts: services.payouts, log: consoleLog, runId: randomUUID(), actor: await services.actor() },
    { ...(id ? { only: id } : {}), ...(input.max !== undefined ? { max: input.max } : {}) },
  );
  return donePage(
    ctx,
    'Redriven',
    '/dlq',
    `Moved ${report.moved} message(s) to the payouts queue (${report.presentAtStart} in the DLQ at start, ${report.skipped} left there). A moved message that fails again comes back to the DLQ with attribute ${REDRIVE_RUN_ATTRIBUTE} = ${report.runId}.` +
      (report.held.length > 0
        ? ` Held in the DLQ, not moved: ${report.held.length} message(s) whose payout is final or under review (${heldText(report.held)}); a redrive would pay nothing. Settle each on its payout page (resolve one under review; pay a failed one again with a retry), then delete the message.`
        : '') +
      (report.notLookedUp.length > 0
        ? ` Left in the DLQ, not moved: ${report.notLookedUp.length} message(s) whose payout could not be read (${report.notLookedUp
            .slice(0, HELD_NAMED)
            .map((u) => u.identity.withdrawal_reference)
            .join(', ')}${report.notLookedUp.length > HELD_NAMED ? ` and ${report.notLookedUp.length - HELD_NAMED} more` : ''}: ${report.notLookedUp[0]?.error ?? ''}); redrive again once the payouts table answers.`
        : ''),
    { href: '/dlq', label: 'Back to the DLQ' },
  );
}

/** The delete form: a reason is required; who deletes defaults to the operator running the console. */
export async function deleteFormPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { id } = parseInput(idQuery, query);
  const shown = await showDeadLetter(services.dlq, id);
  return page(
    ctx,
    'Delete a DLQ message',
    '/dlq',
    html`${table(['id', 'reason', 'payout', 'account'], [[shown.id, shown.reason, payoutLink(shown), shown.accountMasked]])}
<p class="hint">Deleting drops the message for good: do it only when the payout it names needs nothing more (paid through a retry, a duplicate). Nothing is deleted until you confirm on the next page. The console's log line records who, the identity running the console when it differs, why and the payout it named.</p>
<form method="post" action="${withQuery('/dlq/delete', { id })}" class="action delete">
  ${csrfField(ctx)}
  <label>Why it can be dropped (required) <textarea name="reason" maxlength="${REASON_MAX}"></textarea></label>
  <label>Who deletes (your name, kept in the log) <input name="by" value="${await services.defaultOperator()}" maxlength="${WHO_MAX}"></label>
  <button type="submit">Delete…</button>
</form>`,
  );
}

const deleteForm = v.object({ reason: requiredText(REASON_MAX), by: optionalText(WHO_MAX), step: formStep });

const DELETE_LABELS: FieldLabels = { reason: 'Why it can be dropped', by: 'Who deletes' };

/** Delete, step 1 (what will be dropped) or step 2 (the CLI's use case, deleteDeadLetter, which logs the audit line). */
export async function deleteAction(ctx: PageContext, services: ConsoleServices, query: unknown, form: unknown): Promise<Html> {
  const { id } = parseInput(idQuery, query);
  const input = parseInput(deleteForm, form, DELETE_LABELS);
  const by = input.by ?? (await services.defaultOperator());
  if (input.step === 'review') {
    return confirmPage(ctx, 'Delete this message?', '/dlq', {
      action: withQuery('/dlq/delete', { id }),
      what: `Delete message ${id} from the dead-letter queue for good.`,
      warning: 'It cannot be brought back.',
      fields: { reason: input.reason, by },
      labels: DELETE_LABELS,
      cancel: withQuery('/dlq/delete', { id }),
    });
  }
  const deleted = await deleteDeadLetter({ dlq: services.dlq, log: consoleLog }, { id, reason: input.reason, by, actor: await services.actor() });
  return donePage(
    ctx,
    'Deleted',
    '/dlq',
    `Deleted ${deleted.id}${deleted.identity ? ` (${deleted.identity.withdrawal_reference}, ${deleted.identity.platform_merchant_id}, ${deleted.identity.currency})` : ''}.`,
    { href: '/dlq', label: 'Back to the DLQ' },
  );
}
