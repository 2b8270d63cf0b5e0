import { html } from 'hono/html';
import { isListedState } from '@shared/adapters/payout-item-store';
import { FINAL_STATES, PAYOUT_STATES, type Payout, type PayoutState } from '@shared/domain/payout';
import { formatAge, page, table, withQuery, type Html, type PageContext } from '../layout';
import type { ConsoleServices } from '../services';
import { consoleLog } from '../log';

const HOUR_MS = 3_600_000;
const WINDOW_HOURS = 24;
/** In-flight states are read from the open index; more than this many is shown as "1000+". */
const IN_FLIGHT_CAP = 1000;
/** The time-to-final chart uses the newest this-many settled payouts of each final state in the window. */
const TIME_TO_FINAL_SAMPLE = 200;

/** Time-to-final buckets: upper bounds in minutes, and their labels. */
const TTF_BUCKETS: ReadonlyArray<readonly [number, string]> = [
  [1, '< 1 min'],
  [2, '1-2 min'],
  [5, '2-5 min'],
  [15, '5-15 min'],
  [60, '15-60 min'],
  [360, '1-6 h'],
  [1440, '6-24 h'],
  [Number.POSITIVE_INFINITY, '> 24 h'],
];

/** Every page of one state from the listing (used for the few open payouts only). */
async function allInState(services: ConsoleServices, state: PayoutState): Promise<Payout[]> {
  const found: Payout[] = [];
  let cursor: string | undefined;
  do {
    const listed = await services.payouts.listByState({ state, limit: IN_FLIGHT_CAP, ...(cursor ? { cursor } : {}) });
    found.push(...listed.payouts);
    cursor = listed.cursor;
  } while (cursor !== undefined && found.length < IN_FLIGHT_CAP * 10);
  return found;
}

/** What the overview shows, read through the repository (index queries only) and the DLQ's attributes. */
export interface OverviewFigures {
  /** Payouts per state: listed states changed in the window, in-flight states all. */
  readonly byState: ReadonlyArray<{ state: PayoutState; count: number; capped: boolean }>;
  readonly hourLabels: string[];
  /** Per final state, payouts that reached it in each hour of the window. */
  readonly perHour: ReadonlyArray<{ label: PayoutState; values: number[] }>;
  readonly timeToFinal: { labels: string[]; values: number[]; sampled: number };
  readonly needsReview: number;
  readonly dlqDepth: number;
  readonly oldestOpen?: { reference: string; state: PayoutState; ageMs: number; href: string };
}

/** Reads the overview's figures at `now`. */
export async function overviewFigures(services: ConsoleServices, now: Date): Promise<OverviewFigures> {
  const since = new Date(now.getTime() - WINDOW_HOURS * HOUR_MS);
  const listed = PAYOUT_STATES.filter(isListedState);
  const inFlight = PAYOUT_STATES.filter((s) => !isListedState(s));
  const finals = listed.filter((s) => FINAL_STATES.has(s));
  const [times, open, unknown, needsReview, dlqDepth, settled] = await Promise.all([
    Promise.all(listed.map(async (state) => ({ state, times: await services.payouts.stateChangeTimes(state, since, now) }))),
    Promise.all(inFlight.map(async (state) => ({ state, payouts: (await services.payouts.listByState({ state, limit: IN_FLIGHT_CAP })).payouts }))),
    allInState(services, 'UNKNOWN'),
    services.payouts.stateChangeTimes('NEEDS_REVIEW'),
    services.dlqDepth(),
    Promise.all(
      finals.map(async (state) => (await services.payouts.listByState({ state, updatedFrom: since, updatedTo: now, limit: TIME_TO_FINAL_SAMPLE })).payouts),
    ),
  ]);

  const firstHour = Math.floor(since.getTime() / HOUR_MS) + 1;
  const hourLabels = Array.from({ length: WINDOW_HOURS }, (_, i) => `${new Date((firstHour + i) * HOUR_MS).toISOString().slice(11, 13)}:00`);
  const perHour = times
    .filter((t) => FINAL_STATES.has(t.state))
    .map(({ state, times: stamps }) => {
      const values = Array<number>(WINDOW_HOURS).fill(0);
      for (const at of stamps) {
        const index = Math.floor(Date.parse(at) / HOUR_MS) - firstHour + 1;
        const bucket = Math.min(WINDOW_HOURS - 1, Math.max(0, index));
        values[bucket] = (values[bucket] ?? 0) + 1;
      }
      return { label: state, values };
    });

  const ttfValues = Array<number>(TTF_BUCKETS.length).fill(0);
  const sample = settled.flat();
  for (const payout of sample) {
    const minutes = (Date.parse(payout.record.updatedAt) - Date.parse(payout.record.createdAt)) / 60_000;
    const index = TTF_BUCKETS.findIndex(([upTo]) => minutes < upTo);
    ttfValues[index] = (ttfValues[index] ?? 0) + 1;
  }

  const submitted = open.find((o) => o.state === 'SUBMITTED')?.payouts ?? [];
  const oldest = [...unknown, ...submitted].sort((a, b) => a.record.createdAt.localeCompare(b.record.createdAt))[0];
  const byState = [
    ...times.map(({ state, times: stamps }) => ({ state, count: stamps.length, capped: false })),
    ...open.map(({ state, payouts }) => ({ state, count: payouts.length, capped: payouts.length >= IN_FLIGHT_CAP })),
  ].sort((a, b) => PAYOUT_STATES.indexOf(a.state) - PAYOUT_STATES.indexOf(b.state));
  return {
    byState,
    hourLabels,
    perHour,
    timeToFinal: { labels: TTF_BUCKETS.map(([, label]) => label), values: ttfValues, sampled: sample.length },
    needsReview: needsReview.length,
    dlqDepth,
    ...(oldest
      ? {
          oldestOpen: {
            reference: oldest.record.identity.withdrawal_reference,
            state: oldest.state,
            ageMs: now.getTime() - Date.parse(oldest.record.createdAt),
            href: withQuery('/payouts', { reference: oldest.record.identity.withdrawal_reference }),
          },
        }
      : {}),
  };
}

/** A computed overview and when: the page shows its age. */
export interface OverviewSnapshot {
  readonly figures: OverviewFigures;
  readonly at: Date;
  readonly tookMs: number;
}

/**
 * The overview's figures, computed off the request path: the first page view waits for them, later
 * views get the latest snapshot at once and, when it is older than `maxAgeMs`, start one new
 * computation in the background (never two at a time). Counting and charting read whole index
 * ranges, which with 100,000 payouts takes seconds; an operator's page must not.
 */
export function overviewSnapshots(compute: () => Promise<OverviewFigures>, clock: () => Date, maxAgeMs = 60_000) {
  let latest: OverviewSnapshot | undefined;
  let running: Promise<OverviewSnapshot> | undefined;
  const refresh = (): Promise<OverviewSnapshot> => {
    running ??= (async () => {
      const started = clock();
      try {
        const figures = await compute();
        latest = { figures, at: started, tookMs: clock().getTime() - started.getTime() };
        return latest;
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  return {
    /** Starts the first computation now, so the first page view finds it under way or done. */
    warm(): void {
      refresh().catch(logFailure);
    },
    async get(): Promise<OverviewSnapshot> {
      if (!latest) return refresh();
      if (clock().getTime() - latest.at.getTime() > maxAgeMs) refresh().catch(logFailure);
      return latest;
    },
  };
}

function logFailure(error: unknown): void {
  consoleLog.error('console: the overview could not be computed', { error: (error as Error).name, reason: (error as Error).message });
}

export type OverviewSnapshots = ReturnType<typeof overviewSnapshots>;

/**
 * Overview: payouts by state, payouts per hour by outcome over the last 24 hours, the time-to-final
 * distribution, the NEEDS_REVIEW count, the DLQ depth and the oldest UNKNOWN or SUBMITTED payout.
 */
export async function overviewPage(ctx: PageContext, snapshots: OverviewSnapshots): Promise<Html> {
  const snapshot = await snapshots.get();
  const f = snapshot.figures;
  const perHourChart = JSON.stringify({ labels: f.hourLabels, series: f.perHour, stacked: true, xTitle: 'hour (UTC)', yTitle: 'payouts' });
  const ttfChart = JSON.stringify({ labels: f.timeToFinal.labels, series: [{ label: 'payouts', values: f.timeToFinal.values }], xTitle: 'from accepted to final', yTitle: 'payouts' });
  return page(
    ctx,
    'Overview',
    '/',
    html`<p class="hint" id="as-of">As of ${snapshot.at.toISOString()} (computed in ${snapshot.tookMs} ms; recomputed in the background when older than a minute: reload for newer).</p>
<section class="tiles">
  <a class="tile" href="/review"><span class="label">NEEDS_REVIEW</span><span class="value" id="needs-review">${f.needsReview}</span></a>
  <div class="tile"><span class="label">DLQ depth</span><span class="value" id="dlq-depth">${f.dlqDepth}</span></div>
  <div class="tile"><span class="label">oldest UNKNOWN or SUBMITTED</span><span class="value" id="oldest-open">${
    f.oldestOpen ? html`<a href="${f.oldestOpen.href}">${formatAge(f.oldestOpen.ageMs)}</a>` : 'none'
  }</span>${f.oldestOpen ? html`<span class="reason">${f.oldestOpen.reference} (${f.oldestOpen.state})</span>` : ''}</div>
</section>
<section class="charts">
  <div class="chart"><h2>Payouts per hour by outcome, last 24 h</h2><canvas id="chart-per-hour" data-chart="${perHourChart}"></canvas></div>
  <div class="chart"><h2>Time to final (newest ${f.timeToFinal.sampled} settled in 24 h)</h2><canvas id="chart-time-to-final" data-chart="${ttfChart}"></canvas></div>
</section>
<h2>Payouts by state</h2>
<p class="hint">Final states and UNKNOWN: changed in the last 24 hours. In-flight states: all of them.</p>
${table(
  ['state', 'payouts'],
  f.byState.map((s) => [html`<a href="${withQuery('/payouts', { state: s.state })}" class="state state-${s.state}">${s.state}</a>`, s.capped ? `${s.count}+` : s.count]),
)}`,
  );
}
