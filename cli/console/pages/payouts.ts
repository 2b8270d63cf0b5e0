import { html } from 'hono/html';
import { parsePayoutKey, payoutKey } from '@shared/domain/identity';
import type { Payout } from '@shared/domain/payout';
import type { StoredEvent } from '@shared/ports/callbacks';
import { page, table, withQuery, type Html, type PageContext } from '../layout';
import { NotFoundError, optionalText, parseInput, requiredText } from '../query';
import type { ConsoleServices } from '../services';
import * as z from 'zod';

const DAY_MS = 86_400_000;
/** The detail page looks for callbacks naming a payout over at most this many days of its life. */
const CALLBACK_WINDOW_DAYS = 7;

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

const searchQuery = z.object({ reference: optionalText(2048) });

/** Payouts: search by reference through the reference index. */
export async function payoutsPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { reference } = parseInput(searchQuery, query);
  const found = reference ? await services.payouts.findByReference(reference) : undefined;
  return page(
    ctx,
    'Payouts',
    '/payouts',
    html`<form method="get" action="/payouts" class="search">
  <label>Reference <input name="reference" value="${reference ?? ''}" placeholder="withdrawal_reference"></label>
  <button type="submit">Search</button>
</form>
${found === undefined ? html`<p class="hint">Search a payout by its withdrawal_reference.</p>` : table([...PAYOUT_COLUMNS], found.map(payoutRow), `no payout with reference ${reference}`)}`,
  );
}

const detailQuery = z.object({ key: requiredText(4096) });

/** Order notifications stored while the payout was alive that name its reference (the events table's day index). */
async function callbacksNaming(services: ConsoleServices, payout: Payout, now: Date): Promise<StoredEvent[]> {
  const since = new Date(Date.parse(payout.record.createdAt.slice(0, 10)));
  const until = new Date(Math.min(now.getTime() + 1, since.getTime() + CALLBACK_WINDOW_DAYS * DAY_MS));
  const found: StoredEvent[] = [];
  for await (const event of services.events.receivedBetween(since, until)) {
    if (event.withdrawalReference === payout.record.identity.withdrawal_reference) found.push(event);
  }
  return found;
}

/**
 * Payout: its fields (account masked as stored), the timeline of its history with reasons, the
 * provider's last word, the callbacks that named it, and other payouts with the same reference.
 */
export async function payoutDetailPage(ctx: PageContext, services: ConsoleServices, query: unknown, now: Date): Promise<Html> {
  const { key } = parseInput(detailQuery, query);
  let identity;
  try {
    identity = parsePayoutKey(key);
  } catch {
    throw new NotFoundError(`"${key}" is not a payout key`);
  }
  const payout = await services.payouts.get(identity);
  if (!payout) throw new NotFoundError(`no payout ${identity.withdrawal_reference} (${identity.platform_merchant_id}, ${identity.currency})`);
  const r = payout.record;
  const [callbacks, sameReference] = await Promise.all([
    callbacksNaming(services, payout, now),
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
    ['Payout calls', r.submitAttempts],
    ['reconciliation checks', r.checks],
    ['next check', r.nextCheckAt],
    ['reason', r.reason],
    ['created', r.createdAt],
    ['last change', r.updatedAt],
  ];
  return page(
    ctx,
    `Payout ${r.identity.withdrawal_reference}`,
    '/payouts',
    html`${table(['field', 'value'], fields)}
<h2>Timeline</h2>
<ol class="timeline" id="timeline">
${[...r.history].reverse().map(
  (h) => html`<li><time>${h.at}</time> <span class="state state-${h.to}">${h.from ?? '(new)'} → ${h.to}</span> <span class="reason">${h.reason}</span></li>`,
)}
</ol>
<h2>Callbacks that named it</h2>
${table(
  ['received', 'source', 'event', 'recognized'],
  callbacks.map((e) => [e.receivedAt, e.source, html`<a href="${withQuery('/callbacks/view', { id: e.eventId })}">${e.eventId.slice(0, 40)}…</a>`, e.recognized ? 'yes' : 'no']),
  `no stored callback named it in the ${CALLBACK_WINDOW_DAYS} days from its creation`,
)}
<h2>Other payouts with this reference</h2>
${table(['reference', 'merchant', 'amount', 'state', 'last change', 'reason'], linked.map(payoutRow), 'none')}`,
  );
}
