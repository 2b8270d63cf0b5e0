import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { getCollection, listCollections, MAX_COLLECTION_RANGE_DAYS } from '@shared/app/collections';
import { ORDER_STATUSES, PAYMENT_STATUSES, type Collection } from '@shared/domain/collection';
import { InvalidListCursorError } from '@shared/domain/errors';
import { page, select, table, withQuery, type Html, type PageContext } from '../layout';
import { BadRequestError, blankAsAbsent, day, optionalText, parseInput, refusedPageLink, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';

const DAY_MS = 86_400_000;
/** Collections per page. */
const PAGE_SIZE = 50;
/** Days listed when the page names none (as `payrelay collections list --since 7d`). */
const DEFAULT_DAYS = 7;

const listQuery = v.object({
  since: blankAsAbsent(day),
  order_status: blankAsAbsent(v.picklist(ORDER_STATUSES, `must be one of ${ORDER_STATUSES.join(', ')}`)),
  payment_status: blankAsAbsent(v.picklist(PAYMENT_STATUSES, `must be one of ${PAYMENT_STATUSES.join(', ')}`)),
  cursor: optionalText(4096),
});

const LIST_LABELS: FieldLabels = { since: 'Created since', order_status: 'Order status', payment_status: 'Payment status', cursor: '"next page" link' };

function collectionHref(collection: Collection): string {
  return withQuery('/collections/view', { id: collection.partnerOrderId });
}

/**
 * Collections: the collection orders created since a day, newest first, 50 a page, optionally of
 * one order or payment status, through the CLI's use case (`payrelay collections list`).
 */
export async function collectionsPage(ctx: PageContext, services: ConsoleServices, query: unknown, now: Date): Promise<Html> {
  const q = parseInput(listQuery, query, LIST_LABELS);
  const sinceDay = q.since ?? new Date(now.getTime() - DEFAULT_DAYS * DAY_MS).toISOString().slice(0, 10);
  // The use case's own refusals name its since and until; this page has one day field, so it says it in that field's words.
  const since = new Date(`${sinceDay}T00:00:00Z`);
  if (since >= now) throw new BadRequestError('Created since: must be today or earlier');
  if (now.getTime() - since.getTime() > MAX_COLLECTION_RANGE_DAYS * DAY_MS) {
    throw new BadRequestError(`Created since: at most ${MAX_COLLECTION_RANGE_DAYS} days back, the most one list covers`);
  }
  let listed;
  try {
    listed = await listCollections(
      { collections: services.collections, clock: { now: () => now } },
      { since, orderStatus: q.order_status, paymentStatus: q.payment_status, limit: PAGE_SIZE, cursor: q.cursor },
    );
  } catch (error) {
    if (error instanceof InvalidListCursorError) throw refusedPageLink();
    throw error;
  }
  const filters = { since: sinceDay, order_status: q.order_status, payment_status: q.payment_status };
  return page(
    ctx,
    'Collections',
    '/collections',
    html`<p class="hint">Money customers pay in through the payout service: each order's virtual account, and its order and payment status as the provider's notifications moved them. Orders are not created here: that is done with the operator CLI (<code>payrelay collections create</code>).</p>
<form method="get" action="/collections" class="search">
  <label>Created since <input name="since" value="${sinceDay}" placeholder="YYYY-MM-DD"></label>
  <label>Order status ${select('order_status', ORDER_STATUSES, q.order_status)}</label>
  <label>Payment status ${select('payment_status', PAYMENT_STATUSES, q.payment_status)}</label>
  <button type="submit">Show</button>
</form>
${table(
  ['order id', 'merchant', 'amount', 'order', 'payment', 'created', 'provider reference'],
  listed.collections.map((c) => [
    html`<a href="${collectionHref(c)}">${c.partnerOrderId}</a>`,
    c.platformMerchantId,
    `${c.amount} ${c.currency}`,
    c.contradictedBy ? html`<span class="state">${c.orderStatus}</span> <span class="warning">contradicted by ${c.contradictedBy.join(', ')}</span>` : html`<span class="state">${c.orderStatus}</span>`,
    c.paymentStatus,
    c.createdAt,
    c.orderReference,
  ]),
  listed.cursor ? 'none in the days this page read (a page reads at most a month of days with nothing); the next page reads further back' : 'no collection order matches',
)}
<p class="pager">${q.cursor ? html`<a href="${withQuery('/collections', filters)}">first page</a>` : ''}${listed.cursor ? html`<a href="${withQuery('/collections', { ...filters, cursor: listed.cursor })}" id="next-page">next page →</a>` : ''}</p>`,
  );
}

const viewQuery = v.object({ id: requiredText(512) });

/** One collection order: its fields (virtual account masked as stored) and every change, with the notification that made it. */
export async function collectionViewPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const c = await getCollection({ collections: services.collections }, parseInput(viewQuery, query).id);
  return page(
    ctx,
    `Collection ${c.partnerOrderId}`,
    '/collections',
    html`${table(
      ['field', 'value'],
      [
        ['order id', c.partnerOrderId],
        ['merchant', c.platformMerchantId],
        ['amount', `${c.amount} ${c.currency}`],
        ['order status', html`<span id="order-status">${c.orderStatus}</span>`],
        [
          'contradicted by',
          c.contradictedBy
            ? html`<span class="warning" id="contradicted-by">${c.contradictedBy.join(', ')}: later notifications gave another final order status. ${c.orderStatus} (the first) stays; settle with the provider which is true.</span>`
            : undefined,
        ],
        ['payment status', html`<span id="payment-status">${c.paymentStatus}</span>`],
        ["the provider's answer to the create", c.creation],
        ['provider reference', c.orderReference],
        ['virtual account', c.virtualAccount ? [c.virtualAccount.bankName, c.virtualAccount.accountName, c.virtualAccount.accountNumberMasked].filter(Boolean).join(' · ') : undefined],
        ['created', c.createdAt],
        ['last change', c.updatedAt],
      ],
    )}
<h2>Changes</h2>
${table(
  ['at', 'order', 'payment', 'cause', 'notification', 'note'],
  [...c.history].reverse().map((h) => [
    h.at,
    h.orderStatus,
    h.paymentStatus,
    h.cause,
    h.eventId ? html`<a href="${withQuery('/callbacks/view', { id: h.eventId })}">view</a>` : undefined,
    h.note,
  ]),
)}`,
  );
}
