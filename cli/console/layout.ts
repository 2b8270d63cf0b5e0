import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { CSRF_FIELD } from './security';

/*
 * The page shell and the small pieces every page shares. Everything goes through hono's html``
 * helper, which escapes every interpolated string: a provider-supplied value can only ever be text.
 */

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** What a page needs besides its body: the target it shows and the CSRF token for its forms. */
export interface PageContext {
  readonly targetLabel: string;
  readonly csrf: string;
  /** The target's stage leaves KYC out (Target.kycNotDeployed): the navigation has no KYC page then. */
  readonly kycNotDeployed?: boolean;
}

const NAV: ReadonlyArray<readonly [string, string]> = [
  ['/', 'Overview'],
  ['/payouts', 'Payouts'],
  ['/review', 'Review'],
  ['/dlq', 'DLQ'],
  ['/callbacks', 'Callbacks'],
  ['/quarantine', 'Quarantine'],
  ['/kyc', 'KYC subjects'],
  ['/collections', 'Collections'],
];

/** The whole page: head (own CSS and script only), navigation, the target shown, the body. */
export function page(ctx: PageContext, title: string, active: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · payrelay console</title>
<link rel="stylesheet" href="/static/console.css">
<script src="/static/chart.umd.min.js" defer></script>
<script src="/static/console.js" defer></script>
</head>
<body>
<header>
  <strong class="brand">payrelay</strong>
  <nav>${NAV.filter(([href]) => !(ctx.kycNotDeployed && href === '/kyc')).map(([href, label]) => html`<a href="${href}"${href === active ? html` class="active"` : ''}>${label}</a>`)}</nav>
  <span class="target" title="what this console reads and acts on">${ctx.targetLabel}</span>
</header>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>`;
}

/**
 * A table with a header row; cells are escaped text unless they are html`` already. In a scroll box, so a
 * table wider than a narrow window scrolls by itself instead of widening the page.
 */
export function table(head: readonly string[], rows: ReadonlyArray<ReadonlyArray<unknown>>, empty = 'nothing to show'): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-scroll"><table>
<thead><tr>${head.map((h) => html`<th>${h}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cellText(cell)}</td>`)}</tr>`)}</tbody>
</table></div>`;
}

function cellText(cell: unknown): unknown {
  if (cell === undefined || cell === null || cell === '') return '-';
  if (typeof cell === 'object' && 'isEscaped' in (cell as object)) return cell;
  return String(cell);
}

/** A search form's drop-down of `values`, `chosen` preselected; its first option (value "") is `blank`. */
export function select(name: string, values: readonly string[], chosen: string | undefined, blank = 'any'): Html {
  return html`<select name="${name}"><option value="">${blank}</option>${values.map((v) => html`<option value="${v}"${chosen === v ? html` selected` : ''}>${v}</option>`)}</select>`;
}

/** The hidden CSRF field every form carries. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${ctx.csrf}">`;
}

/**
 * The confirmation step of every action: what will happen, the values that will be sent (as hidden
 * fields, shown in a table), and a button that posts them again with `step=confirm`.
 */
export function confirmPage(
  ctx: PageContext,
  title: string,
  active: string,
  options: {
    action: string;
    what: string;
    fields: Record<string, string>;
    cancel: string;
    warning?: string;
    /** What the table shows instead of a field's value (an account number typed in the form is shown masked). */
    display?: Record<string, string>;
    /** What the table calls each field: the form's words, not the field's `name`. */
    labels?: Readonly<Record<string, string>>;
  },
): Html {
  return page(
    ctx,
    title,
    active,
    html`<p class="confirm-what">${options.what}</p>
${options.warning ? html`<p class="warning">${options.warning}</p>` : ''}
${table(['field', 'value'], Object.entries(options.fields).map(([name, value]) => [options.labels?.[name] ?? name, options.display?.[name] ?? value]))}
<form method="post" action="${options.action}" class="confirm">
  ${csrfField(ctx)}
  ${Object.entries(options.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <input type="hidden" name="step" value="confirm">
  <button type="submit" id="confirm">Confirm</button>
  <a href="${options.cancel}">Cancel</a>
</form>`,
  );
}

/** The outcome of an action, with a link on. */
export function donePage(ctx: PageContext, title: string, active: string, message: string, next: { href: string; label: string }): Html {
  return page(ctx, title, active, html`<p class="done" id="done">${message}</p><p><a href="${next.href}">${next.label}</a></p>`);
}

/** A page for input that is merely wrong or an action refused: what was wrong, and the way back. */
export function problemPage(ctx: PageContext, title: string, message: string, back?: string): Html {
  return page(
    ctx,
    title,
    '',
    html`<p class="problem" id="problem">${message}</p><p>${back ? html`<a href="${back}" id="back">Back</a> · ` : ''}<a href="/">Overview</a></p>`,
  );
}

/** "3 min", "2 h 5 min", "4 d 1 h": an age for a person. */
export function formatAge(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A URL with the given query, dropping empty values. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
