import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { confirmKycApproval } from '@shared/app/confirm-kyc-approval';
import { kycVerifier } from '@shared/adapters/kyc-verifier';
import { isApprovalConfirmed, needsConfirmation, type KycSubject } from '@shared/domain/kyc-subject';
import { confirmPage, csrfField, donePage, page, table, withQuery, type Html, type PageContext } from '../layout';
import { BadRequestError, formStep, NotFoundError, optionalText, parseInput, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { consoleLog } from '../log';

/** Approvals waiting for their confirming pull, listed on the page. */
const WAITING_SHOWN = 50;

const subjectQuery = v.object({ user_reference: optionalText(512) });

const LABELS: FieldLabels = { user_reference: 'User reference' };

function confirmation(subject: KycSubject): string {
  if (isApprovalConfirmed(subject)) return `confirmed by pull at ${subject.confirmedAt}`;
  if (needsConfirmation(subject)) return `waiting for the confirming pull${subject.lastPull ? ` (last: ${subject.lastPull.outcome}, ${subject.lastPull.providerStatus})` : ''}`;
  if (subject.lastPull?.outcome === 'contradicted') return `contradicted by pull (${subject.lastPull.providerStatus})`;
  return 'not an approval';
}

function confirmForm(ctx: PageContext, userReference: string): Html {
  return html`<form method="post" action="/kyc/confirm" class="inline">${csrfField(ctx)}<input type="hidden" name="user_reference" value="${userReference}"><button type="submit">Confirm by pull…</button></form>`;
}

async function appIdOf(services: ConsoleServices): Promise<string> {
  const appId = await services.kycAppId();
  if (!appId) throw new NotFoundError('the KYC secret holds no app id yet, so there is no KYC subject to show; the console cannot set it: it is put with the operator CLI (`payrelay secrets put kyc`)');
  return appId;
}

/**
 * KYC subjects: one subject by user reference (its phase, decision, every final decision seen and
 * whether the approval was confirmed by pull), and the approvals still waiting for that pull.
 */
export async function kycPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { user_reference: userReference } = parseInput(subjectQuery, query, LABELS);
  const appId = await appIdOf(services);
  const [subject, waiting] = await Promise.all([
    userReference ? services.kyc.getSubject({ appId, userReference }) : undefined,
    services.kyc.unconfirmedApprovals(WAITING_SHOWN),
  ]);
  return page(
    ctx,
    'KYC subjects',
    '/kyc',
    html`<form method="get" action="/kyc" class="search">
  <label>User reference <input name="user_reference" class="reference" value="${userReference ?? ''}"></label>
  <button type="submit">Show</button>
</form>
${userReference === undefined ? '' : subject === undefined ? html`<p class="empty">no callback received for user ${userReference} yet</p>` : html`${table(
  ['field', 'value'],
  [
    ['user reference', subject.userReference],
    ['phase', subject.phase],
    ['decision', html`<span id="kyc-decision">${subject.decision}</span>`],
    ['final decisions seen', subject.finalDecisionsSeen.join(', ')],
    ['decision changed later', subject.decisionChanged ? 'YES: look at it' : 'no'],
    ['approval', confirmation(subject)],
    ['provider event', subject.event],
    ['note', subject.note],
    ['occurred', subject.occurredAt],
    ['last change', subject.updatedAt],
  ],
)}${needsConfirmation(subject) ? confirmForm(ctx, subject.userReference) : ''}`}
<h2>Approvals waiting for the confirming pull</h2>
<p class="hint">An approval counts only once the KYC service, asked for the user's verification status, says approved: "Confirm by pull" asks it (after a confirmation step).</p>
${table(
  ['user reference', 'confirm'],
  waiting.map((ref) => [html`<a href="${withQuery('/kyc', { user_reference: ref.userReference })}">${ref.userReference}</a>`, confirmForm(ctx, ref.userReference)]),
  'none waiting',
)}`,
  );
}

const confirmFormSchema = v.object({ user_reference: requiredText(512), step: formStep });

/** Confirm one approval by pulling verification-status, after a confirmation step. */
export async function kycConfirmAction(ctx: PageContext, services: ConsoleServices, form: unknown, now: Date): Promise<Html> {
  const input = parseInput(confirmFormSchema, form, LABELS);
  const appId = await appIdOf(services);
  const ref = { appId, userReference: input.user_reference };
  const subject = await services.kyc.getSubject(ref);
  if (!subject) throw new NotFoundError(`no KYC subject ${input.user_reference}`);
  if (!needsConfirmation(subject)) throw new BadRequestError(`${input.user_reference}: nothing to confirm (${confirmation(subject)})`);
  if (input.step === 'review') {
    return confirmPage(ctx, 'Confirm this approval?', '/kyc', {
      action: '/kyc/confirm',
      what: 'Ask the KYC service for this user\'s verification status now. The approval counts only if it says approved.',
      fields: { user_reference: input.user_reference },
      labels: LABELS,
      cancel: withQuery('/kyc', { user_reference: input.user_reference }),
    });
  }
  const after = await confirmKycApproval(
    { subjects: services.kyc, verifier: kycVerifier(services.kycClient), clock: { now: () => now }, log: consoleLog },
    ref,
  );
  consoleLog.info('KYC approval pulled from the console', { userReference: input.user_reference, outcome: after?.lastPull?.outcome });
  return donePage(ctx, 'KYC approval', '/kyc', `${input.user_reference}: ${after ? confirmation(after) : 'gone'}.`, {
    href: withQuery('/kyc', { user_reference: input.user_reference }),
    label: 'Back to the subject',
  });
}
