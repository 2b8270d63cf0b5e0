import { html } from 'hono/html';
import { parsePayoutKey, payoutKey } from '@shared/domain/identity';
import { PAYOUT_STATES, type Payout, type PayoutHistoryEntry } from '@shared/domain/payout';
import { InvalidListCursorError } from '@shared/domain/errors';
import type { CallbackListPage } from '@shared/ports/callbacks';
import { page, select, table, withQuery, type Html, type PageContext } from '../layout';
import { BadRequestError, blankAsAbsent, day, NotFoundError, optionalText, parseInput, refusedPageLink, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { reasonWithActor } from '@cli/operator';
import { OVERRIDDEN_WITH_FORCE } from '@shared/app/resolve-payout';
import * as v from '@shared/validation/valibot';

/** The payout page shows this many of the callbacks that named it, newest first; the Callbacks page lists them all. */
const CALLBACKS_SHOWN = 20;

/** The link to a payout's page. */
export function payoutHref(payout: Payout): string {
  return withQuery('/payouts/view', { key: payoutKey(payout.record.identity) });
}

/** One row of a payout list: reference (linked), merchant, amount, state, last change, reason. */
export function payoutRow(payout: Payout): unknown[] {
  const r = payout.record;
  return [
    html`<a href="${payoutHref(payout)}">${r.identity.withdrawal_reference}</a>`,
    r.identity.platform_merchant_id,
    `${r.amount} ${r.identity.currency}`,
    html`<span class="state state-${r.state}">${r.state}</span>`,
    r.updatedAt,
    r.reason,
  ];
}

export const PAYOUT_COLUMNS = ['reference', 'merchant', 'amount', 'state', 'last change', 'reason'] as const;

/** Rows per page of a state listing. */
const PAGE_SIZE = 50;

const searchQuery = v.object({
  reference: optionalText(2048),
  state: blankAsAbsent(v.picklist(PAYOUT_STATES, `must be one of ${PAYOUT_STATES.join(', ')}`)),
  merchant: optionalText(256),
  from: blankAsAbsent(day),
  to: blankAsAbsent(day),
  cursor: optionalText(4096),
});

const SEARCH_LABELS: FieldLabels = {
  reference: 'Reference',
  state: 'State',
  merchant: 'Merchant',
  from: 'Changed from',
  to: 'Changed until',
  cursor: '"next page" link',
};

/**
 * Payouts: by reference (the reference index), or by state with merchant and last-change date range
 * (the repository's index-backed listing, newest change first, a page at a time). Never a scan.
 */
export async function payoutsPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const q = parseInput(searchQuery, query, SEARCH_LABELS);
  const updatedFrom = q.from ? new Date(`${q.from}T00:00:00.000Z`) : undefined;
  const updatedTo = q.to ? new Date(`${q.to}T23:59:59.999Z`) : undefined;
  if (updatedFrom && updatedTo && updatedTo < updatedFrom) throw new BadRequestError('Changed until: must not be before the day in Changed from');
  let results: Html;
  if (q.reference) {
    const found = (await services.payouts.findByReference(q.reference)).filter((p) => !q.merchant || p.record.identity.platform_merchant_id === q.merchant);
    results = table([...PAYOUT_COLUMNS], found.map(payoutRow), `no payout with reference ${q.reference}`);
  } else if (q.state) {
    let listed;
    try {
      listed = await services.payouts.listByState({
        state: q.state,
        limit: PAGE_SIZE,
        ...(q.merchant ? { merchant: q.merchant } : {}),
        ...(updatedFrom ? { updatedFrom } : {}),
        ...(updatedTo ? { updatedTo } : {}),
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
    } catch (error) {
      if (error instanceof InvalidListCursorError) throw refusedPageLink();
      throw error;
    }
    const next = listed.cursor ? withQuery('/payouts', { state: q.state, merchant: q.merchant, from: q.from, to: q.to, cursor: listed.cursor }) : undefined;
    results = html`${table([...PAYOUT_COLUMNS], listed.payouts.map(payoutRow), `no ${q.state} payout matches`)}
<p class="pager">${q.cursor ? html`<a href="${withQuery('/payouts', { state: q.state, merchant: q.merchant, from: q.from, to: q.to })}">first page</a>` : ''}${next ? html`<a href="${next}" id="next-page">next page →</a>` : ''}</p>`;
  } else {
    results = html`<p class="hint">Find a payout by its reference (the withdrawal_reference the merchant gave it), or choose a state to list the payouts in it, newest change first; narrow that list to one merchant or to days of last change (UTC) if you like.</p>`;
  }
  return page(
    ctx,
    'Payouts',
    '/payouts',
    html`<form method="get" action="/payouts" class="search">
  <label>Reference <input name="reference" class="reference" value="${q.reference ?? ''}" placeholder="withdrawal_reference"></label>
  <label>State ${select('state', PAYOUT_STATES, q.state, '(by reference)')}</label>
  <label>Merchant <input name="merchant" value="${q.merchant ?? ''}" placeholder="platform_merchant_id"></label>
  <label>Changed from <input name="from" value="${q.from ?? ''}" placeholder="YYYY-MM-DD"></label>
  <label>Changed until <input name="to" value="${q.to ?? ''}" placeholder="YYYY-MM-DD"></label>
  <button type="submit">Search</button>
</form>
${results}`,
  );
}

const HISTORY_BASICS = new Set(['at', 'from', 'to', 'reason']);

/**
 * The facts an operator's entry also writes into its reason ("retried as X by ama", "resolved as
 * FAILED by ama: ticket 4711"), or that the reason is shown with (the identity that ran the action,
 * beside the name: "by ama (as arn:...)"), so that listings that show only the reason still name them.
 */
const QUOTED_IN_REASON = new Set(['by', 'evidence', 'actor']);

/**
 * A recorded provider answer in the console's words. A forced resolve stores its answer ending in
 * the CLI's wording ("overridden with --force"), which the history keeps as written (retry reads it);
 * the console shows no CLI option (docs/console.md), so it says what happened instead, at display time.
 */
export function consoleProviderAnswer(answer: string, resolve = true): string {
  if (!answer.endsWith(OVERRIDDEN_WITH_FORCE)) return answer;
  // A forced retry (CLI only: the console offers none) records the same words on both payouts.
  const what = resolve ? 'the operator resolved it against this answer ("force" ticked)' : 'an operator overrode this answer with evidence (a forced retry)';
  return `${answer.slice(0, -OVERRIDDEN_WITH_FORCE.length)}${what}`;
}

/** Whether a history entry is an operator's resolve of a payout under review (the console's "force" box). */
const isResolve = (h: PayoutHistoryEntry): boolean => h.from === 'NEEDS_REVIEW' && (h.to === 'SUCCEEDED' || h.to === 'FAILED');

/**
 * One history entry: when, the move, the reason (with the identity that ran an operator's action
 * beside the name it states, as `payrelay payouts status` shows it), and whatever else the entry
 * records (their evidence, the provider's answer at that moment), each labelled, all escaped. A fact
 * the reason already quotes is not shown twice.
 */
export function timelineEntry(h: PayoutHistoryEntry): Html {
  const reason = reasonWithActor(h);
  const extra = Object.entries(h as unknown as Record<string, unknown>).filter(
    ([key, value]) =>
      !HISTORY_BASICS.has(key) && value !== undefined && value !== '' && !(QUOTED_IN_REASON.has(key) && typeof value === 'string' && reason.includes(value)),
  );
  return html`<li><time>${h.at}</time> <span class="state state-${h.to}">${h.from ?? '(new)'} → ${h.to}</span> <span class="reason">${reason}</span>${extra.map(
    ([key, value]) =>
      html` <span class="fact"><span class="key">${key}:</span> ${typeof value !== 'string' ? JSON.stringify(value) : key === 'providerAnswer' ? consoleProviderAnswer(value, isResolve(h)) : value}</span>`,
  )}</li>`;
}

/** The `key` parameter of the pages about one payout (detail, resolve, retry). */
export const detailQuery = v.object({ key: requiredText(4096) });

/** The payout a page's `key` names; a key that is not one, or names nothing, is a 404 that says so. */
export async function payoutOfKey(services: ConsoleServices, key: string): Promise<Payout> {
  let identity;
  try {
    identity = parsePayoutKey(key);
  } catch {
    throw new NotFoundError(`"${key}" is not a payout key`);
  }
  const payout = await services.payouts.get(identity);
  if (!payout) throw new NotFoundError(`no payout ${identity.withdrawal_reference} (${identity.platform_merchant_id}, ${identity.currency})`);
  return payout;
}

/** The link to the payout of the same merchant and currency under another reference (a retry, or the payout it retried). */
function linkedHref(payout: Payout, reference: string): string {
  return withQuery('/payouts/view', { key: payoutKey({ ...payout.record.identity, withdrawal_reference: reference }) });
}

/** What an operator can do with this payout from here: resolve it (NEEDS_REVIEW) or retry it (FAILED, not retried yet). */
function actionsOf(payout: Payout): Html {
  const key = payoutKey(payout.record.identity);
  if (payout.state === 'NEEDS_REVIEW') {
    return html`<h2>Settle it</h2><p><a href="${withQuery('/review/resolve', { key })}" id="resolve-link">Resolve this payout…</a> (with the provider's current answer and your evidence)</p>`;
  }
  if (payout.state === 'FAILED' && payout.record.retriedAs === undefined) {
    return html`<h2>Pay it again</h2><p><a href="${withQuery('/payouts/retry', { key })}" id="retry-link">Retry under a new reference…</a> (a new payout to the same beneficiary for the same amount, linked both ways)</p>`;
  }
  return html``;
}

/**
 * The newest order notifications naming the payout's reference since the day it was created (the
 * events table's reference index: one Query, whatever the traffic), and whether there are more.
 */
async function callbacksNaming(services: ConsoleServices, payout: Payout): Promise<CallbackListPage> {
  return services.events.listCallbacks({
    reference: payout.record.identity.withdrawal_reference,
    source: 'payout-notification',
    receivedFrom: new Date(Date.parse(payout.record.createdAt.slice(0, 10))),
    limit: CALLBACKS_SHOWN,
  });
}

/**
 * Payout: its fields (account masked as stored), the timeline of its history with reasons, the
 * provider's last word, the callbacks that named it, and other payouts with the same reference.
 */
export async function payoutDetailPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const payout = await payoutOfKey(services, parseInput(detailQuery, query).key);
  const r = payout.record;
  const [callbacks, sameReference] = await Promise.all([
    callbacksNaming(services, payout),
    services.payouts.findByReference(r.identity.withdrawal_reference),
  ]);
  const linked = sameReference.filter((p) => p.key !== payout.key);
  const fields: Array<[string, unknown]> = [
    ['withdrawal_reference', r.identity.withdrawal_reference],
    ['merchant', r.identity.platform_merchant_id],
    ['amount', `${r.amount} ${r.identity.currency}`],
    ['state', html`<span class="state state-${r.state}" id="payout-state">${r.state}</span>`],
    ['account', `${r.accountCode} ${r.accountMasked}`],
    ['expected name', r.expectedName],
    ['name at the provider', r.verifiedName],
    ['provider status (last answer)', r.providerStatus],
    ['Payout intents (at most as many calls)', r.submitAttempts],
    ['reconciliation checks', r.checks],
    ['next check', r.nextCheckAt],
    ['reason', r.reason],
    ['retry of', r.retryOf ? html`<a href="${linkedHref(payout, r.retryOf)}" id="retry-of">${r.retryOf}</a>` : undefined],
    ['retried as', r.retriedAs ? html`<a href="${linkedHref(payout, r.retriedAs)}" id="retried-as">${r.retriedAs}</a>` : undefined],
    ['created', r.createdAt],
    ['last change', r.updatedAt],
  ];
  return page(
    ctx,
    `Payout ${r.identity.withdrawal_reference}`,
    '/payouts',
    html`${table(['field', 'value'], fields)}
${actionsOf(payout)}
<h2>Timeline</h2>
<ol class="timeline" id="timeline">
${[...r.history].reverse().map(timelineEntry)}
</ol>
<h2>Callbacks that named it</h2>
<div id="named-callbacks">${table(
  ['received', 'source', 'event', 'recognized'],
  callbacks.events.map((e) => [e.receivedAt, e.source, html`<a href="${withQuery('/callbacks/view', { id: e.eventId })}">${e.eventId.slice(0, 40)}…</a>`, e.recognized ? 'yes' : 'no']),
  'no stored order notification named it since its creation',
)}</div>
${callbacks.cursor ? html`<p class="pager">the newest ${CALLBACKS_SHOWN} shown: <a href="${withQuery('/callbacks', { reference: r.identity.withdrawal_reference, source: 'payout-notification' })}" id="all-callbacks">all of them on the Callbacks page →</a></p>` : ''}
<h2>Other payouts with this reference</h2>
${table(['reference', 'merchant', 'amount', 'state', 'last change', 'reason'], linked.map(payoutRow), 'none')}`,
  );
}
