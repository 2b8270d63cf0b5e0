import { performance } from 'node:perf_hooks';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { payoutKey } from '@shared/domain/identity';
import { Payout, type PayoutHistoryEntry, type PayoutState } from '@shared/domain/payout';
import type { StoredEvent } from '@shared/ports/callbacks';
import { startHandlerEnv } from '../lib/local-env';
import { verdict, type Part, type PartResult, type Row } from '../lib/part';
import { ms, summarize } from '../lib/stats';

/** Each console page answers within this (issue 18), with 100,000 payouts stored. */
export const CONSOLE_PAGE_TARGET_MS = 300;
const RUNS = 10;
const HOUR_MS = 3_600_000;

/**
 * The mix of stored payouts: mostly settled, a few open and a few for people, over the last 48 hours.
 * Reviews carry their watch (a next check) as in production; successes do not (their reversal watch
 * reads by-state by age), so the open index holds the UNKNOWN, SUBMITTED and NEEDS_REVIEW ones.
 */
const MIX: ReadonlyArray<readonly [PayoutState, number]> = [
  ['SUCCEEDED', 0.9],
  ['FAILED', 0.04],
  ['REJECTED', 0.03],
  ['NEEDS_REVIEW', 0.01],
  ['UNKNOWN', 0.005],
  ['SUBMITTED', 0.005],
];
const PATHS: Partial<Record<PayoutState, PayoutState[]>> = {
  SUCCEEDED: ['VERIFYING', 'SUBMITTING', 'SUBMITTED', 'SUCCEEDED'],
  FAILED: ['VERIFYING', 'SUBMITTING', 'SUBMITTED', 'FAILED'],
  // A refusal withdraws the intent written beside AccountVerification, as the worker records it now.
  REJECTED: ['VERIFYING', 'SUBMITTING', 'REJECTED'],
  NEEDS_REVIEW: ['VERIFYING', 'SUBMITTING', 'UNKNOWN', 'NEEDS_REVIEW'],
  UNKNOWN: ['VERIFYING', 'SUBMITTING', 'UNKNOWN'],
  SUBMITTED: ['VERIFYING', 'SUBMITTING', 'SUBMITTED'],
};

/** Payout `i` of the seed: state by the mix, created up to 48 h ago, final a few minutes later. */
function seededPayout(i: number, total: number, merchant: string, now: number): Payout {
  let state: PayoutState = 'SUCCEEDED';
  let cumulative = 0;
  const position = (i + 0.5) / total;
  for (const [s, share] of MIX) {
    cumulative += share;
    if (position < cumulative) {
      state = s;
      break;
    }
  }
  const created = now - ((i * 7919) % (48 * 60)) * 60_000 - 5 * 60_000;
  const updated = created + (1 + (i % 20)) * 60_000;
  const at = (t: number): string => new Date(t).toISOString();
  const steps = PATHS[state] ?? [];
  const history: PayoutHistoryEntry[] = [{ from: null, to: 'ACCEPTED', at: at(created), reason: 'payout request accepted' }];
  steps.forEach((to, n) => history.push({ from: history[n]?.to ?? 'ACCEPTED', to, at: at(n === steps.length - 1 ? updated : created + n * 1000), reason: `bench step to ${to}` }));
  // As in production, a review stays in the open index (under its watch) beside the UNKNOWN and
  // SUBMITTED ones; a success does not (its reversal watch reads by-state by age).
  const open = state === 'UNKNOWN' || state === 'SUBMITTED' || state === 'NEEDS_REVIEW';
  return Payout.fromRecord({
    identity: { platform_merchant_id: i % 10 === 0 ? `${merchant}-b` : merchant, currency: 'NGN', withdrawal_reference: `bench-console-${i}` },
    state,
    version: history.length,
    amount: `${100 + (i % 900)}.00`,
    accountMasked: '******6789',
    accountCode: '057',
    verifiedName: 'Adaeze Okafor',
    providerStatus: state === 'SUCCEEDED' ? 'COMPLETED' : undefined,
    submitAttempts: state === 'REJECTED' ? 0 : 1,
    checks: 2,
    ...(open ? { nextCheckAt: at(now + HOUR_MS) } : {}),
    reason: state === 'NEEDS_REVIEW' ? 'provider answer contradicts the recorded state' : undefined,
    history,
    createdAt: at(created),
    updatedAt: at(updated),
  });
}

/** The payout whose page the bench fetches; many callbacks name it. */
const SAMPLE_PAYOUT = 1234;
/** Days of callbacks stored, ending now. */
const CALLBACK_DAYS = 3;

/**
 * Callback `i` of the seed, received in the last CALLBACK_DAYS days: 7 in 10 are order notifications
 * naming a bench payout (1 in 200 of all the sample payout, so its page and its reference listing have
 * hundreds), the rest KYC callbacks naming one of 5,000 users; 1 in 50 is unrecognized and names nothing.
 */
function seededCallback(i: number, payouts: number, now: number): StoredEvent {
  const notification = i % 10 < 7;
  const reference = i % 200 === 0 ? `bench-console-${SAMPLE_PAYOUT}` : notification ? `bench-console-${(i * 31) % payouts}` : `bench-user-${i % 5000}`;
  const recognized = i % 50 !== 1;
  const receivedAt = new Date(now - ((i * 7919) % (CALLBACK_DAYS * 86_400)) * 1000 - (i % 1000)).toISOString();
  const body = notification
    ? { status: 'success', data: { order_details: { status: 'COMPLETED', payout_reference: reference }, payment: { status: 'PAID' }, beneficiary: { account_number: '0123456789', name: 'Adaeze Okafor' }, note: 'n'.repeat(400) } }
    : { event: 'applicantReviewed', user_reference: reference, status: 'completed', meta_data: { kyc_status: 'approved', note: 'n'.repeat(400) } };
  return {
    eventId: `${notification ? 'payout-notification' : 'kyc'}#bench-${i}`,
    source: notification ? 'payout-notification' : 'kyc',
    body: JSON.stringify(body),
    receivedAt,
    recognized,
    ...(recognized ? {} : { unrecognizedReason: 'bench: unknown status' }),
    expiresAt: Math.floor(now / 1000) + 90 * 86_400,
    ...(recognized && notification ? { withdrawalReference: reference } : {}),
    ...(recognized && !notification ? { appId: 'bench-app', userReference: reference } : {}),
  };
}

/** The href of a page's "next page" link (attribute text unescaped), or undefined on the last page. */
function nextPageOf(page: string): string | undefined {
  return /<a href="([^"]+)" id="next-page">/.exec(page)?.[1]?.replaceAll('&amp;', '&');
}

/** BatchWriteItem in pages of 25, a few in flight, retrying unprocessed items. */
async function batchPut(client: DynamoDBDocumentClient, table: string, items: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const start = next;
      next += 25;
      let requests = items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const out = await client.send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
        requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/**
 * The ops console's pages with `consolePayouts` payouts and `consoleCallbacks` callbacks stored (default
 * 100,000 each): dynalite in its own
 * process, the console in this one, each page fetched over loopback with the session cookie, one
 * warm-up then RUNS timed requests. Target: every answer within 300 ms.
 */
export const consolePages: Part = async ({ options, progress }): Promise<PartResult> => {
  const total = options.consolePayouts;
  const emulators = await startHandlerEnv({ stage: 'bench-console', logLevel: options.logLevel, simulator: {} });
  try {
    const documentClient = (await import('@shared/adapters/dynamodb-client')).documentClient();
    const { toItem } = await import('@shared/adapters/payout-item-store');
    const table = process.env.PAYOUTS_TABLE_NAME as string;
    const merchant = emulators.provider.platform_merchant_id;
    const now = Date.now();
    const seedStarted = performance.now();
    const CHUNK = 5000;
    for (let start = 0; start < total; start += CHUNK) {
      const items = Array.from({ length: Math.min(CHUNK, total - start) }, (_, k) => toItem(seededPayout(start + k, total, merchant, now)) as unknown as Record<string, unknown>);
      await batchPut(documentClient, table, items);
      progress(`console: seeded ${Math.min(total, start + CHUNK)}/${total} payouts`);
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const { toEventItem } = await import('@shared/adapters/event-store');
    const eventsTable = process.env.EVENTS_TABLE_NAME as string;
    const callbacks = options.consoleCallbacks;
    const callbackSeedStarted = performance.now();
    for (let start = 0; start < callbacks; start += CHUNK) {
      const items = Array.from({ length: Math.min(CHUNK, callbacks - start) }, (_, k) => toEventItem(seededCallback(start + k, total, now)) as unknown as Record<string, unknown>);
      await batchPut(documentClient, eventsTable, items);
      progress(`console: seeded ${Math.min(callbacks, start + CHUNK)}/${callbacks} callbacks`);
    }
    const callbackSeedSeconds = (performance.now() - callbackSeedStarted) / 1000;
    const sampleCallbacks = Math.ceil(callbacks / 200);

    const { createConsoleServices } = await import('@cli/console/services');
    const { startConsole } = await import('@cli/console/server');
    const target = { kind: 'local' as const, label: 'bench', env: { ...(process.env as Record<string, string>) }, urls: {} };
    const services = await createConsoleServices(target);
    const { overviewFigures } = await import('@cli/console/pages/overview');
    const computeTimes: number[] = [];
    for (let run = 0; run < 3; run += 1) {
      const started = performance.now();
      await overviewFigures(services, new Date());
      computeTimes.push(performance.now() - started);
    }
    const compute = summarize(computeTimes);
    progress(`console: overview figures computed in ${ms(compute.median)} (median of 3)`);
    const handle = await startConsole({ services, port: 0 });
    try {
      const login = await fetch(handle.loginUrl, { redirect: 'manual' });
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const sample = seededPayout(SAMPLE_PAYOUT, total, merchant, now);
      const day = new Date(now).toISOString().slice(0, 10);
      // A later page of today's callbacks: follow "next page" four times, as an operator would.
      let laterPage = '/callbacks';
      for (let n = 0; n < 4; n += 1) {
        const answer = await fetch(`${handle.url}${laterPage}`, { headers: { cookie } });
        const next = nextPageOf(await answer.text());
        if (next === undefined) throw new Error(`console: today's callbacks end before page ${n + 2}; store more with --console-callbacks`);
        laterPage = next;
      }
      const pages: Array<[string, string]> = [
        ['overview', '/'],
        ['payouts: SUCCEEDED, newest 50', '/payouts?state=SUCCEEDED'],
        ['payouts: FAILED, one merchant, today', `/payouts?state=FAILED&merchant=${encodeURIComponent(merchant)}&from=${day}&to=${day}`],
        ['payouts: SUBMITTED (open index, not-yet-final partitions)', '/payouts?state=SUBMITTED'],
        ['payouts: by reference', `/payouts?reference=${encodeURIComponent(sample.record.identity.withdrawal_reference)}`],
        [`payout detail (${sampleCallbacks} callbacks name it)`, `/payouts/view?key=${encodeURIComponent(payoutKey(sample.record.identity))}`],
        ['review (NEEDS_REVIEW, newest 50)', '/review'],
        ['callbacks: today, first page', '/callbacks'],
        ['callbacks: today, 5th page', laterPage],
        ['callbacks: today, KYC only', '/callbacks?source=kyc'],
        [`callbacks: by reference (${sampleCallbacks} name it)`, `/callbacks?reference=${encodeURIComponent(sample.record.identity.withdrawal_reference)}`],
        ['KYC subjects', '/kyc'],
      ];
      const rows: Row[] = [
        { metric: 'console overview figures, computed off the request path: median of 3', value: ms(compute.median), verdict: 'info' },
      ];
      const data: Record<string, unknown> = { payouts: total, callbacks, seedSeconds, callbackSeedSeconds, overviewCompute: compute };
      let worst = 0;
      for (const [name, path] of pages) {
        const timings: number[] = [];
        for (let run = -1; run < RUNS; run += 1) {
          const started = performance.now();
          const answer = await fetch(`${handle.url}${path}`, { headers: { cookie } });
          await answer.text();
          if (answer.status !== 200) throw new Error(`console page ${path} answered ${answer.status}`);
          if (run >= 0) timings.push(performance.now() - started);
        }
        const s = summarize(timings);
        worst = Math.max(worst, s.max);
        data[name] = s;
        rows.push({ metric: `console ${name}: median / max`, value: `${ms(s.median)} / ${ms(s.max)}`, target: `<= ${CONSOLE_PAGE_TARGET_MS} ms`, verdict: verdict(s.max <= CONSOLE_PAGE_TARGET_MS) });
        progress(`console: ${name} median ${ms(s.median)}, max ${ms(s.max)}`);
      }
      return {
        part: 'console',
        title: `Ops console pages (${total.toLocaleString('en')} payouts and ${callbacks.toLocaleString('en')} callbacks stored)`,
        rows,
        data,
        notes: [
          `Each page fetched once to warm up, then ${RUNS} times in a row over loopback with the session cookie; dynalite runs in its own process.`,
          'The overview page answers from a snapshot of its figures, recomputed in the background when older than a minute (the page shows its age); computing one reads the by-state index alone (times, not items) for the counts and per-hour chart, and samples the newest 200 settled payouts per final state for the time-to-final chart.',
          `Seeding ${total.toLocaleString('en')} payouts (BatchWriteItem) took ${seedSeconds.toFixed(1)} s, ${callbacks.toLocaleString('en')} callbacks over the last ${CALLBACK_DAYS} days ${callbackSeedSeconds.toFixed(1)} s.`,
          `Callbacks: 7 in 10 order notifications naming a bench payout (1 in 200 of all name the sample payout), the rest KYC callbacks naming one of 5,000 users, 1 in 50 unrecognized; bodies about 600 bytes. The 5th page is reached by following "next page" from the first.`,
        ],
        summary: { consolePageMaxMs: worst },
      };
    } finally {
      await handle.close();
    }
  } finally {
    await emulators.stop();
  }
};
