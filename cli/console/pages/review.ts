import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { askProvider, resolvePayout } from '@shared/app/resolve-payout';
import { noticeStatusText, noticesNaming } from '@shared/app/payout-notices';
import { InvalidListCursorError } from '@shared/domain/errors';
import { payoutKey } from '@shared/domain/identity';
import type { Payout } from '@shared/domain/payout';
import { confirmPage, csrfField, donePage, page, table, withQuery, type Html, type PageContext } from '../layout';
import { choice, formStep, optionalText, parseInput, refusedPageLink, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { consoleProviderAnswer, detailQuery, payoutHref, payoutOfKey } from './payouts';

const PAGE_SIZE = 50;
const reviewQuery = v.object({ cursor: optionalText(4096) });

/** Review: the NEEDS_REVIEW queue, newest first, each with why it is there and a link to settle it. */
export async function reviewPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { cursor } = parseInput(reviewQuery, query, { cursor: '"next page" link' });
  let listed;
  try {
    listed = await services.payouts.listByState({ state: 'NEEDS_REVIEW', limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
  } catch (error) {
    if (error instanceof InvalidListCursorError) throw refusedPageLink();
    throw error;
  }
  return page(
    ctx,
    'Review',
    '/review',
    html`<p class="hint">Payouts a person must settle. Open one to see its history; resolve it with the provider's current answer and your evidence.</p>
${table(
  ['reference', 'merchant', 'amount', 'since', 'why', ''],
  listed.payouts.map((p) => [
    html`<a href="${payoutHref(p)}">${p.record.identity.withdrawal_reference}</a>`,
    p.record.identity.platform_merchant_id,
    `${p.record.amount} ${p.record.identity.currency}`,
    p.record.updatedAt,
    p.record.reason,
    html`<a href="${withQuery('/review/resolve', { key: payoutKey(p.record.identity) })}" class="resolve">resolve…</a>`,
  ]),
  'nothing waits for review',
)}
<p class="pager">${cursor ? html`<a href="/review">first page</a>` : ''}${listed.cursor ? html`<a href="${withQuery('/review', { cursor: listed.cursor })}">next page →</a>` : ''}</p>`,
  );
}

/** The evidence an operator writes is recorded verbatim in history; bounded like any form text. */
const EVIDENCE_MAX = 2000;
const WHO_MAX = 200;

/** The facts a person needs next to the resolve form: what, to whom (masked), since when, why. */
function payoutFacts(payout: Payout, providerLine: string): Html {
  const r = payout.record;
  return table(
    ['field', 'value'],
    [
      ['withdrawal_reference', html`<a href="${payoutHref(payout)}">${r.identity.withdrawal_reference}</a>`],
      ['merchant', r.identity.platform_merchant_id],
      ['amount', `${r.amount} ${r.identity.currency}`],
      ['account', `${r.accountCode} ${r.accountMasked}`],
      ['state', html`<span class="state state-${r.state}">${r.state}</span>`],
      ['why it is here', r.reason],
      ['since', r.updatedAt],
      ['Payout intents (at most as many calls)', r.submitAttempts],
      ["the provider's answer now (GetPayout)", html`<strong id="provider-answer">${providerLine}</strong>`],
    ],
  );
}

/**
 * The resolve form of one NEEDS_REVIEW payout: its facts, the provider's answer asked now
 * (GetPayout, as `payrelay payouts resolve` asks), and the outcome, evidence, who and force fields.
 */
export async function resolveFormPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { key } = parseInput(detailQuery, query);
  const payout = await payoutOfKey(services, key);
  const action = withQuery('/review/resolve', { key });
  if (payout.state !== 'NEEDS_REVIEW') {
    return page(ctx, `Resolve ${payout.record.identity.withdrawal_reference}`, '/review', html`<p class="empty">This payout is ${payout.state}: only a NEEDS_REVIEW payout is resolved. <a href="${payoutHref(payout)}">See its timeline</a>.</p>`);
  }
  const [{ line }, who, notified] = await Promise.all([
    askProvider(services.operator, payout.record.identity),
    services.defaultOperator(),
    // Shown as evidence only: the resolve reads them again and refuses if it cannot, so a failed read
    // here says so instead of failing the page.
    noticesNaming(services.operator.notifications, payout.record.identity, payout.record.createdAt).catch((error: unknown) => ({
      unreadable: error instanceof Error ? error.name : 'an unexpected failure',
    })),
  ]);
  return page(
    ctx,
    `Resolve ${payout.record.identity.withdrawal_reference}`,
    '/review',
    html`${payoutFacts(payout, line)}
<h2>The provider's signed notifications naming it</h2>
<p class="hint">Stored as received and authentic (signature checked); they never settle a payout, but each shows the provider knows this reference, whatever GetPayout answers now.</p>
<div id="provider-notifications">${
      'unreadable' in notified
        ? html`<p class="empty">They could not be read now (${notified.unreadable}); resolving reads them again and is refused while they cannot be read.</p>`
        : table(
            ['received', 'event', 'status words'],
            notified.notices.map((n) => [n.receivedAt, html`<a href="${withQuery('/callbacks/view', { id: n.eventId })}">${n.eventId.slice(0, 40)}…</a>`, noticeStatusText(n)]),
            'none stored since its creation',
          )
    }</div>
<h2>Settle it</h2>
<p class="hint">Say what happened to the money and what shows it; both are required, and both are kept in the payout's history with your name. Nothing is written until you confirm on the next page. The console asks the provider again when you confirm: an outcome the provider contradicts is refused (delivered against failed; failed while it still holds the payout as pending; failed on "not found" when a signed notification above names it, when the provider acknowledged it before, or when a Payout call may have reached it), and the refusal says what evidence would settle it. Tick "force" only with that evidence in hand (for failed: the provider's written confirmation that it never executed the payout) and quote it: a FAILED payout can be retried, so forcing FAILED on a payout the provider executed risks paying twice.</p>
<form method="post" action="${action}" class="action resolve">
  ${csrfField(ctx)}
  <label>Outcome (required) <select name="as"><option value="">choose…</option><option value="succeeded">succeeded: the money arrived</option><option value="failed">failed: the money did not arrive</option></select></label>
  <label>Evidence (required: what shows the outcome) <textarea name="evidence" maxlength="${EVIDENCE_MAX}" placeholder="bank statement 2026-11-20 line 14; provider ticket 4711"></textarea></label>
  <label>Who resolves (your name, kept in the history) <input name="by" value="${who}" maxlength="${WHO_MAX}"></label>
  <label class="check"><span><input type="checkbox" name="force" value="yes"> force: resolve against the provider's answer, on evidence that outweighs it (recorded as an override)</span></label>
  <button type="submit">Resolve…</button>
</form>`,
  );
}

const resolveForm = v.object({
  as: choice(['succeeded', 'failed'], 'choose succeeded or failed'),
  evidence: requiredText(EVIDENCE_MAX),
  by: optionalText(WHO_MAX),
  force: v.optional(v.picklist(['yes', 'no'], 'must be yes or no'), 'no'),
  step: formStep,
});

const RESOLVE_LABELS: FieldLabels = { as: 'Outcome', evidence: 'Evidence', by: 'Who resolves', force: 'Force' };

/**
 * Resolve, step 1 (what will be written, with the provider's answer asked again) or step 2 (the
 * CLI's use case, resolvePayout: it asks GetPayout itself, refuses a contradicted outcome unless
 * forced, writes conditionally and records who, the evidence and the provider's answer).
 */
export async function resolveAction(ctx: PageContext, services: ConsoleServices, query: unknown, form: unknown): Promise<Html> {
  const { key } = parseInput(detailQuery, query);
  const input = parseInput(resolveForm, form, RESOLVE_LABELS);
  const payout = await payoutOfKey(services, key);
  const ref = payout.record.identity.withdrawal_reference;
  const by = input.by ?? (await services.defaultOperator());
  const action = withQuery('/review/resolve', { key });
  if (input.step === 'review') {
    const { line } = await askProvider(services.operator, payout.record.identity);
    return confirmPage(ctx, `Resolve ${ref} as ${input.as === 'succeeded' ? 'SUCCEEDED' : 'FAILED'}?`, '/review', {
      action,
      what: `Write ${ref} as ${input.as === 'succeeded' ? 'SUCCEEDED' : 'FAILED'} (final), recording who, your evidence and the provider's answer. The provider says now: ${line}.`,
      ...(input.force === 'yes' ? { warning: 'Forced: this stands against the provider\'s answer on your evidence alone.' } : {}),
      fields: { as: input.as, evidence: input.evidence, by, force: input.force },
      labels: RESOLVE_LABELS,
      cancel: action,
    });
  }
  const result = await resolvePayout(services.operator, {
    identity: payout.record.identity,
    as: input.as,
    evidence: input.evidence,
    by,
    actor: await services.actor(),
    force: input.force === 'yes',
  });
  return donePage(
    ctx,
    'Resolved',
    '/review',
    `${ref} is now ${result.payout.state}${result.forced ? ' (forced against the provider\'s answer)' : ''}. Provider's answer recorded: ${consoleProviderAnswer(result.providerAnswer)}.`,
    { href: payoutHref(result.payout), label: 'See it in the timeline' },
  );
}
