import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { MAX_NESTED_JSON_LEVELS, maskAccountsInJsonText } from '@shared/domain/account';
import { CALLBACK_SOURCES, MAX_REFERENCE_LENGTH, receivedDayOf } from '@shared/domain/callbacks';
import { InvalidListCursorError } from '@shared/domain/errors';
import type { CallbackListPage } from '@shared/ports/callbacks';
import type { KycSubjectStore } from '@shared/ports/kyc';
import { replayEvents, ReplayRangeError, type ReplayResult } from '@shared/app/replay-events';
import { confirmPage, csrfField, donePage, page, select, table, withQuery, type Html, type PageContext } from '../layout';
import { BadRequestError, blankAsAbsent, day, formStep, isoTime, NotFoundError, optionalText, parseInput, refusedPageLink, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { noTelemetry } from '@cli/log';
import { consoleLog } from '../log';

const DAY_MS = 86_400_000;
/** Rows per page. */
const PAGE_SIZE = 50;

const listQuery = v.object({
  day: blankAsAbsent(day),
  source: blankAsAbsent(v.picklist(CALLBACK_SOURCES, `must be ${CALLBACK_SOURCES.join(' or ')}`)),
  reference: optionalText(MAX_REFERENCE_LENGTH),
  cursor: optionalText(4096),
});

const LIST_LABELS: FieldLabels = { day: 'Day', source: 'Source', reference: 'Reference', cursor: '"next page" link' };

/**
 * Callbacks, newest first, a page at a time: of one UTC day (the events table's time index), or naming
 * one reference, withdrawal_reference or user_reference (the reference index, every day kept, or one
 * day), narrowed by source. Index Queries through the event store, never a whole day in memory.
 */
export async function callbacksPage(ctx: PageContext, services: ConsoleServices, query: unknown, now: Date): Promise<Html> {
  const filter = parseInput(listQuery, query, LIST_LABELS);
  const shownDay = filter.day ?? (filter.reference ? undefined : receivedDayOf(now));
  const common = { limit: PAGE_SIZE, ...(filter.source ? { source: filter.source } : {}), ...(filter.cursor ? { cursor: filter.cursor } : {}) };
  let listed: CallbackListPage;
  try {
    listed = await services.events.listCallbacks(
      filter.reference ? { ...common, reference: filter.reference, ...(shownDay ? { day: shownDay } : {}) } : { ...common, day: shownDay as string },
    );
  } catch (error) {
    if (error instanceof InvalidListCursorError) throw refusedPageLink();
    throw error;
  }
  const q = { day: shownDay, source: filter.source, reference: filter.reference };
  const since = new Date(`${shownDay ?? receivedDayOf(now)}T00:00:00Z`);
  const until = new Date(since.getTime() + DAY_MS);
  const previous = receivedDayOf(new Date(since.getTime() - DAY_MS));
  const days = shownDay
    ? html`<a href="${withQuery('/callbacks', { ...q, day: previous })}">← ${previous}</a> · <a href="${withQuery('/callbacks', { ...q, day: receivedDayOf(until) })}">${receivedDayOf(until)} →</a>`
    : '';
  const what = `${filter.source ? `${filter.source} callbacks` : 'Callbacks'}${filter.reference ? ` naming ${filter.reference}` : ''}${shownDay ? ` on ${shownDay}` : ', every day kept'}`;
  return page(
    ctx,
    'Callbacks',
    '/callbacks',
    html`<form method="get" action="/callbacks" class="search">
  <label>Day (UTC; empty: today) <input name="day" value="${filter.day ?? ''}" placeholder="YYYY-MM-DD"></label>
  <label>Source ${select('source', CALLBACK_SOURCES, filter.source)}</label>
  <label>Reference <input name="reference" class="reference" value="${filter.reference ?? ''}" placeholder="withdrawal or user reference"></label>
  <button type="submit">Show</button>
</form>
<p class="pager">${days}</p>
<p>${what}, newest first, ${PAGE_SIZE} a page.</p>
${table(
  ['received', 'source', 'names', 'recognized', 'body'],
  listed.events.map((e) => [
    e.receivedAt,
    e.source,
    e.withdrawalReference ?? e.userReference,
    e.recognized ? 'yes' : html`no <span class="reason">${e.unrecognizedReason ?? ''}</span>`,
    html`<a href="${withQuery('/callbacks/view', { id: e.eventId })}">view</a>`,
  ]),
  filter.cursor ? 'no more callbacks' : 'no callback matches',
)}
<p class="pager">${filter.cursor ? html`<a href="${withQuery('/callbacks', q)}">first page</a> ` : ''}${listed.cursor ? html`<a href="${withQuery('/callbacks', { ...q, cursor: listed.cursor })}" id="next-page">next page →</a>` : ''}</p>
<h2>Replay</h2>
<p>Apply again the stored callbacks received in a time range: KYC callbacks to the KYC subjects, order notifications to the collections they name. What is already applied stays as it is, so replaying a range twice is harmless; notifications about payouts are left to the reconciler. Nothing is applied until you confirm on the next page.</p>
<form method="post" action="/callbacks/replay" class="action">
  ${csrfField(ctx)}
  <label>Received from (UTC time) <input name="since" class="instant" value="${since.toISOString()}"></label>
  <label>Received before (UTC time) <input name="until" class="instant" value="${until.toISOString()}"></label>
  <button type="submit">Replay…</button>
</form>`,
  );
}

const viewQuery = v.object({ id: requiredText(4096) });

/** One stored callback: its metadata and its body as received (account and phone numbers masked). */
export async function callbackViewPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { id } = parseInput(viewQuery, query);
  const event = await services.events.get(id);
  if (!event) throw new NotFoundError(`no stored callback ${id}`);
  return page(
    ctx,
    'Callback',
    '/callbacks',
    html`${table(
      ['field', 'value'],
      [
        ['event id', event.eventId],
        ['source', event.source],
        ['received', event.receivedAt],
        ['from address', event.sourceIp],
        ['recognized', event.recognized ? 'yes' : `no: ${event.unrecognizedReason ?? ''}`],
        ['withdrawal_reference', event.withdrawalReference],
        ['user_reference', event.userReference],
      ],
    )}
<h2>Body as received</h2>
<p class="hint">Shown verbatim as text, except: every value of an account, card or phone member (account_number, iban, msisdn, phone…) is masked, at any depth and inside a JSON document or JSON string carried as a string value (read ${MAX_NESTED_JSON_LEVELS} levels deep; one the console does not read is shown as * whole); any other string (value or member name) with {, }, [, ] or " in it, and a body that is not JSON, have every run of 6 digits or more masked. A number in a plain string of another member (order 12345678 paid) is shown as sent.</p>
<pre class="body" id="callback-body">${maskAccountsInJsonText(event.body)}</pre>`,
  );
}

/**
 * The console's KYC subjects, reached only when a replay meets a KYC callback: on a stack whose stage
 * leaves KYC out that use fails with KycNotDeployedError, and a range of order notifications replays.
 */
function kycSubjectsOnUse(services: ConsoleServices): KycSubjectStore {
  return {
    getSubject: (ref) => services.kyc.getSubject(ref),
    saveSubject: (next) => services.kyc.saveSubject(next),
    unconfirmedApprovals: (limit) => services.kyc.unconfirmedApprovals(limit),
  };
}

const replayForm = v.object({ since: isoTime, until: isoTime, step: formStep });

const REPLAY_LABELS: FieldLabels = { since: 'Received from', until: 'Received before' };

/** Replay, step 1 (what will happen) or step 2 (done, with the counts). */
export async function replayAction(ctx: PageContext, services: ConsoleServices, form: unknown, now: Date): Promise<Html> {
  const input = parseInput(replayForm, form, REPLAY_LABELS);
  const since = new Date(input.since);
  const until = new Date(input.until);
  if (until <= since) throw new BadRequestError('Received before: must be later than Received from');
  if (input.step === 'review') {
    return confirmPage(ctx, 'Replay callbacks?', '/callbacks', {
      action: '/callbacks/replay',
      what: 'Re-apply the stored callbacks received in this range: KYC callbacks to the KYC subjects, order notifications to the collections they name. Projections that already reflect them do not change.',
      fields: { since: input.since, until: input.until },
      labels: REPLAY_LABELS,
      cancel: '/callbacks',
    });
  }
  let result: ReplayResult;
  try {
    result = await replayEvents(
      // A stack without KYC replays its order notifications; its KYC callbacks are counted and left (as `events replay`).
      { events: services.events, subjects: services.target.kycNotDeployed ? undefined : kycSubjectsOnUse(services), collections: services.collections, clock: { now: () => now }, log: consoleLog, telemetry: noTelemetry },
      { since, until },
    );
  } catch (error) {
    if (error instanceof ReplayRangeError) throw new BadRequestError(error.message);
    throw error;
  }
  consoleLog.info('callbacks replayed from the console', { since: input.since, until: input.until, ...result });
  return donePage(
    ctx,
    'Replayed',
    '/callbacks',
    `Replayed ${result.scanned} stored callback(s): ${result.applied} applied, ${result.unchanged} unchanged, ${result.unrecognized} unrecognized, ${result.skipped} order notification(s) about payouts left to the reconciler.${
      result.kycNotDeployed === undefined ? '' : ` KYC is not deployed on ${services.target.label}: ${result.kycNotDeployed} KYC callback(s) not applied.`
    }`,
    { href: withQuery('/callbacks', { day: input.since.slice(0, 10) }), label: 'Back to the callbacks' },
  );
}
