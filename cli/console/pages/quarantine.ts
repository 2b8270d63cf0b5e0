import { html } from 'hono/html';
import * as v from '@shared/validation/valibot';
import { calibrateFromQuarantine } from '@shared/app/quarantine';
import { MAX_NESTED_JSON_LEVELS, maskAccountsInJsonText } from '@shared/domain/account';
import { csrfField, page, table, withQuery, type Html, type PageContext } from '../layout';
import { blankAsAbsent, day, NotFoundError, parseInput, requiredText, type FieldLabels } from '../query';
import type { ConsoleServices } from '../services';
import { consoleLog } from '../log';

const DAY_MS = 86_400_000;
/** Notifications listed, and tried by "calibrate from these": the newest this many (as the CLI's --limit default). */
const SHOWN = 50;
/** Days shown when the page names none (as the CLI's `--since 7d` default). */
const DEFAULT_DAYS = 7;

const listQuery = v.object({ since: blankAsAbsent(day) });

const LABELS: FieldLabels = { since: 'Received since' };

/** The period a page shows: from the start of `since` (default: 7 days back) to now. */
function periodOf(since: string | undefined, now: Date): { since: Date; until: Date; sinceDay: string } {
  const sinceDay = since ?? new Date(now.getTime() - DEFAULT_DAYS * DAY_MS).toISOString().slice(0, 10);
  return { since: new Date(`${sinceDay}T00:00:00Z`), until: new Date(now.getTime() + 1), sinceDay };
}

/**
 * Quarantine: the order notifications that carried the partner public key but a signature no
 * configured scheme reproduces (kept, never applied), newest first, as `payrelay events quarantine
 * list` shows them; and "calibrate from these" (`payrelay signature calibrate --from-quarantine`).
 */
export async function quarantinePage(ctx: PageContext, services: ConsoleServices, query: unknown, now: Date): Promise<Html> {
  const period = periodOf(parseInput(listQuery, query, LABELS).since, now);
  const kept = await services.quarantine.list(period.since, period.until, SHOWN);
  return page(
    ctx,
    'Quarantine',
    '/quarantine',
    html`<p class="hint">Order notifications that came with the partner public key but a signature none of the configured schemes reproduces. They answered 401, were kept here and changed nothing; a payout one names was made due for a check with the provider. Usually the provider signs with a scheme payrelay is not set to: "Calibrate from these" finds it.</p>
<form method="get" action="/quarantine" class="search">
  <label>Received since (UTC day) <input name="since" value="${period.sinceDay}" placeholder="YYYY-MM-DD"></label>
  <button type="submit">Show</button>
</form>
<p>${kept.length === SHOWN ? `The newest ${SHOWN}` : `${kept.length}`} notification(s) kept since ${period.sinceDay}.</p>
${table(
  ['received', 'names payout', 'from address', 'bytes', 'body'],
  kept.map((n) => [
    n.receivedAt,
    n.withdrawalReference ? html`<a href="${withQuery('/payouts', { reference: n.withdrawalReference })}">${n.withdrawalReference}</a>` : undefined,
    n.sourceIp,
    Buffer.byteLength(n.body, 'utf8'),
    html`<a href="${withQuery('/quarantine/view', { id: n.id })}" class="view">view</a>`,
  ]),
  'nothing quarantined in this period',
)}
${kept.length === 0
  ? ''
  : html`<h2>Calibrate from these</h2>
<p>Try every signing scheme payrelay supports, with the keys of the provider secret, against the notifications above, and see which one reproduces their signatures. It reads the keys and compares; it changes nothing.</p>
<form method="post" action="/quarantine/calibrate" class="action calibrate">
  ${csrfField(ctx)}
  <input type="hidden" name="since" value="${period.sinceDay}">
  <button type="submit">Calibrate from these</button>
</form>`}`,
  );
}

const viewQuery = v.object({ id: requiredText(200) });

/** One quarantined notification: where and when it came from, and its body as received (accounts masked). */
export async function quarantineViewPage(ctx: PageContext, services: ConsoleServices, query: unknown): Promise<Html> {
  const { id } = parseInput(viewQuery, query);
  const found = await services.quarantine.get(id);
  if (!found) throw new NotFoundError(`no quarantined notification ${id} (ids look like 2026-11-23.3f9a0c21d4e5b6a7; kept ones expire after the retention period)`);
  return page(
    ctx,
    'Quarantined notification',
    '/quarantine',
    html`${table(
      ['field', 'value'],
      [
        ['id', found.id],
        ['received', found.receivedAt],
        ['from address', found.sourceIp],
        ['names payout', found.withdrawalReference ? html`<a href="${withQuery('/payouts', { reference: found.withdrawalReference })}">${found.withdrawalReference}</a>` : undefined],
      ],
    )}
<h2>Body as received</h2>
<p class="hint">Shown verbatim as text, except: every value of an account, card or phone member (account_number, iban, msisdn, phone…) is masked, at any depth and inside a JSON document or JSON string carried as a string value (read ${MAX_NESTED_JSON_LEVELS} levels deep; one the console does not read is shown as * whole); any other string (value or member name) with {, }, [, ] or " in it, and a body that is not JSON, have every run of 6 digits or more masked. A number in a plain string of another member (order 12345678 paid) is shown as sent. Nothing in it was applied.</p>
<pre class="body" id="quarantine-body">${maskAccountsInJsonText(found.body)}</pre>`,
  );
}

const calibrateForm = v.object({ since: day });

/**
 * "Calibrate from these": the CLI's use case (calibrateFromQuarantine) over the listed period with
 * the target's provider secret. No confirmation step: it writes nothing, it only compares.
 */
export async function calibrateAction(ctx: PageContext, services: ConsoleServices, form: unknown, now: Date): Promise<Html> {
  const period = periodOf(parseInput(calibrateForm, form, LABELS).since, now);
  const result = await calibrateFromQuarantine(services.quarantine, await services.signingSecrets(), { since: period.since, until: period.until, limit: SHOWN });
  const best = result.profiles[0];
  const everyOne = best !== undefined && best.reproduced === result.tried;
  consoleLog.info('signature calibrated from the quarantine in the console', { since: period.sinceDay, tried: result.tried, best: best?.profile.name, reproduced: best?.reproduced });
  let verdict: Html;
  if (result.tried === 0) verdict = html`<p class="empty" id="calibration">Nothing quarantined since ${period.sinceDay}: nothing to calibrate from. Choose an earlier day.</p>`;
  else if (!best) verdict = html`<p class="warning" id="calibration">No supported signing scheme reproduces any of the ${result.tried} notification(s), with the keys of the provider secret. Check the keys with the provider (a rotated merchant secret key?), or ask for the scheme they sign with.</p>`;
  else if (everyOne) verdict = html`<p class="done" id="calibration">Set <code>SIGNING_PROFILE=${best.profile.name}</code>: it reproduces every one of the ${result.tried} notification(s). Then deploy (or restart <code>npm start</code>), and the provider's notifications are accepted.</p>`;
  else verdict = html`<p class="warning" id="calibration">No scheme reproduces all ${result.tried} notification(s); the best reproduces ${best.reproduced}. Some may not come from the provider at all: look at the ones no scheme reproduces before you change SIGNING_PROFILE.</p>`;
  return page(
    ctx,
    'Calibration',
    '/quarantine',
    html`${verdict}
${table(
  ['SIGNING_PROFILE value', 'reproduces'],
  result.profiles.map((p) => [html`<code>${p.profile.name}</code>`, `${p.reproduced} of ${result.tried}`]),
  'no scheme reproduces any',
)}
<p><a href="${withQuery('/quarantine', { since: period.sinceDay })}">Back to the quarantine</a></p>`,
  );
}
