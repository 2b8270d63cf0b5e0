import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { retryPayout } from '@shared/app/retry-payout';
import { maskAccount } from '@shared/domain/account';
import { confirmPage, csrfField, donePage, page, table, withQuery, type Html, type PageContext } from '../layout';
import { formStep, optionalText, parseInput, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { detailQuery, payoutHref, payoutOfKey } from './payouts';

const WHO_MAX = 200;

/**
 * The retry form of one FAILED payout: a new payout to the same beneficiary for the same amount
 * under a new withdrawal_reference, as `payrelay payouts retry` makes it.
 */
export async function retryFormPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { key } = parseInput(detailQuery, query);
  const payout = await payoutOfKey(services, key);
  const r = payout.record;
  const title = `Retry ${r.identity.withdrawal_reference}`;
  if (payout.state !== 'FAILED' || r.retriedAs !== undefined) {
    const why =
      r.retriedAs !== undefined
        ? `It was already retried as ${r.retriedAs}.`
        : payout.state === 'REVERSED' || payout.state === 'SUCCEEDED'
          ? `It is ${payout.state}: only a FAILED payout is retried. Once the cause is fixed, send a new payout request under a new withdrawal_reference.`
          : `It is ${payout.state}: only a FAILED payout is retried.`;
    return page(ctx, title, '/payouts', html`<p class="empty">${why} <a href="${payoutHref(payout)}">See its timeline</a>.</p>`);
  }
  return page(
    ctx,
    title,
    '/payouts',
    html`${table(
      ['field', 'value'],
      [
        ['withdrawal_reference', html`<a href="${payoutHref(payout)}">${r.identity.withdrawal_reference}</a>`],
        ['merchant', r.identity.platform_merchant_id],
        ['amount', `${r.amount} ${r.identity.currency}`],
        ['account', `${r.accountCode} ${r.accountMasked}`],
        ['why it failed', r.reason],
      ],
    )}
<p class="hint">A retry pays the same amount to the same account again, as a new payout under a reference of its own; nothing is sent until you confirm on the next page. The provider is asked first, and the retry is refused while it holds this payout in any state but failed, or cannot be asked; on "not found" it is also refused when that answer does not show this payout was never executed: a signed notification of the provider's names it, the provider acknowledged it before, or it was made FAILED against the provider's answer (force) while a Payout call may have reached the provider. The console never retries against the provider's answer. payrelay keeps only the masked account (${r.accountMasked}); the full number comes from the provider's record of this payout. Leave "Full account number" empty; only if the retry is refused because that record does not give the number, go back and type the beneficiary's full number there (it must be the account ${r.accountMasked}).</p>
<form method="post" action="${withQuery('/payouts/retry', { key })}" class="action retry">
  ${csrfField(ctx)}
  <label>New payout's reference (required, unused) <input name="new_reference" class="reference" value="${r.identity.withdrawal_reference}-R1" maxlength="256"></label>
  <label>Full account number (only when asked) <input name="account_number" autocomplete="off" maxlength="64"></label>
  <label>Who retries (your name, kept in the history) <input name="by" value="${await services.defaultOperator()}" maxlength="${WHO_MAX}"></label>
  <button type="submit">Retry…</button>
</form>`,
  );
}

const retryForm = v.object({
  new_reference: requiredText(256),
  account_number: optionalText(64),
  by: optionalText(WHO_MAX),
  step: formStep,
});

const RETRY_LABELS: FieldLabels = { new_reference: "New payout's reference", account_number: 'Full account number', by: 'Who retries' };

/**
 * Retry, step 1 (what will be sent; a typed account number is shown masked) or step 2 (the CLI's
 * use case, retryPayout: it asks GetPayout, links the first payout by a conditional write, creates
 * the new one with `retryOf` and sends its message).
 */
export async function retryAction(ctx: PageContext, services: ConsoleServices, query: unknown, form: unknown): Promise<Html> {
  const { key } = parseInput(detailQuery, query);
  const input = parseInput(retryForm, form, RETRY_LABELS);
  const payout = await payoutOfKey(services, key);
  const ref = payout.record.identity.withdrawal_reference;
  const by = input.by ?? (await services.defaultOperator());
  const action = withQuery('/payouts/retry', { key });
  if (input.step === 'review') {
    const fields: Record<string, string> = { new_reference: input.new_reference, by, ...(input.account_number ? { account_number: input.account_number } : {}) };
    return confirmPage(ctx, `Retry ${ref} as ${input.new_reference}?`, '/payouts', {
      action,
      what: `Pay ${payout.record.amount} ${payout.record.identity.currency} again to ${payout.record.accountCode} ${payout.record.accountMasked} as a new payout ${input.new_reference}, linked to ${ref} both ways. The provider is asked first; nothing is sent if it holds ${ref}, cannot be asked, or its "not found" does not show that ${ref} was never executed.`,
      fields,
      labels: RETRY_LABELS,
      ...(input.account_number ? { display: { account_number: maskAccount(input.account_number) } } : {}),
      cancel: action,
    });
  }
  const result = await retryPayout(services.operator, {
    identity: payout.record.identity,
    newReference: input.new_reference,
    by,
    actor: await services.actor(),
    ...(input.account_number ? { accountNumber: input.account_number } : {}),
  });
  return donePage(
    ctx,
    'Retried',
    '/payouts',
    result.sent
      ? `${input.new_reference} was created (retry of ${ref}) and sent to the payouts queue.`
      : `${input.new_reference} already exists as the retry of ${ref} (${result.retry.state}); nothing was sent again.`,
    { href: payoutHref(result.retry), label: `Follow ${input.new_reference}` },
  );
}
