import { html } from 'hono/html';
import * as z from 'zod';
import { InvalidListCursorError } from '@shared/domain/errors';
import { page, table, withQuery, type Html, type PageContext } from '../layout';
import { BadRequestError, optionalText, parseInput } from '../query';
import type { ConsoleServices } from '../services';
import { payoutHref } from './payouts';

const PAGE_SIZE = 50;
const reviewQuery = z.object({ cursor: optionalText(4096) });

/** Review: the NEEDS_REVIEW queue, newest first, each with why it is there and a link to settle it. */
export async function reviewPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { cursor } = parseInput(reviewQuery, query);
  let listed;
  try {
    listed = await services.payouts.listByState({ state: 'NEEDS_REVIEW', limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
  } catch (error) {
    if (error instanceof InvalidListCursorError) throw new BadRequestError(`cursor: ${error.message}`);
    throw error;
  }
  return page(
    ctx,
    'Review',
    '/review',
    html`<p class="hint">Payouts a person must settle. Open one to see its history and the provider's current answer, then resolve it.</p>
${table(
  ['reference', 'merchant', 'amount', 'since', 'why', ''],
  listed.payouts.map((p) => [
    html`<a href="${payoutHref(p)}">${p.record.identity.withdrawal_reference}</a>`,
    p.record.identity.platform_merchant_id,
    `${p.record.amount} ${p.record.identity.currency}`,
    p.record.updatedAt,
    p.record.reason,
    html`<a href="${payoutHref(p)}#settle" class="settle">settle…</a>`,
  ]),
  'nothing waits for review',
)}
<p class="pager">${cursor ? html`<a href="/review">first page</a>` : ''}${listed.cursor ? html`<a href="${withQuery('/review', { cursor: listed.cursor })}">next page →</a>` : ''}</p>`,
  );
}
