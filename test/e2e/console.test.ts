import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { hostname, userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'puppeteer-core';
import type { ConsoleHandle } from '@cli/console/server';
import type { LocalStack } from '@local/stack';
import { DEAD_LETTER_REASON, HOSTILE_NAME, PROVIDER_PROFILE, launchBrowser, runConsoleScenario, targetOf, type ConsoleScenario } from '@test/support/console-fixture';

/*
 * The ops console end to end, in a real headless Chromium: the local stack in-process (dynalite,
 * fauxqs, the simulator over HTTP, the real handlers), a lean payout scenario through it, then the
 * console driven as an operator drives it.
 */

/** A raw GET with a chosen Host header (fetch does not let a caller set Host). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('ops console in a browser', () => {
  let stack: LocalStack;
  let scenario: ConsoleScenario;
  let consoleHandle: ConsoleHandle;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const { startLocalStack } = await import('@local/stack');
    stack = await startLocalStack({ gatewayPort: 0, simulatorPort: 0, reconcileEveryMs: 1000, pollWaitSeconds: 1 });
    const [browserStarted, scenarioDone] = await Promise.all([launchBrowser(), runConsoleScenario(stack)]);
    browser = browserStarted;
    scenario = scenarioDone;
    const { createConsoleServices } = await import('@cli/console/services');
    const { startConsole } = await import('@cli/console/server');
    consoleHandle = await startConsole({ services: await createConsoleServices(targetOf(stack)), port: 0 });
    page = await browser.newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await consoleHandle?.close();
    await stack?.stop();
  });

  it('refuses a request without the token, and a request for another host name', async () => {
    const bare = await fetch(`${consoleHandle.url}/payouts`);
    expect(bare.status).toBe(401);
    expect(await bare.text()).toContain('payrelay console');
    const wrong = await fetch(`${consoleHandle.url}/?token=not-the-token`, { redirect: 'manual' });
    expect(wrong.status).toBe(401);
    expect(await getWithHost(`${consoleHandle.url}/`, 'rebound.example:80')).toBe(421);
  });

  it('takes the token once, sets an HttpOnly cookie and moves to a clean URL', async () => {
    const answer = await page.goto(consoleHandle.loginUrl);
    expect(answer?.status()).toBe(200);
    expect(page.url()).toBe(`${consoleHandle.url}/`);
    const cookies = await browser.cookies();
    const session = cookies.find((c) => c.name === 'payrelay_console');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Overview');
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");
  });

  it('draws the overview charts with the scenario\'s payouts in them', async () => {
    await page.goto(`${consoleHandle.url}/`);
    await page.waitForSelector('#chart-per-hour[data-rendered="true"]', { timeout: 10_000 });
    await page.waitForSelector('#chart-time-to-final[data-rendered="true"]', { timeout: 10_000 });
    const drawn = await page.$$eval('canvas[data-chart]', (canvases) =>
      canvases.map((c) => {
        const canvas = c as unknown as { width: number; dataset: { chart?: string } };
        const data = JSON.parse(canvas.dataset.chart ?? '{}') as { series: Array<{ label: string; values: number[] }> };
        return { id: c.id, total: data.series.flatMap((s) => s.values).reduce((a, b) => a + b, 0), width: canvas.width };
      }),
    );
    expect(drawn).toEqual([
      { id: 'chart-per-hour', total: expect.any(Number), width: expect.any(Number) },
      { id: 'chart-time-to-final', total: expect.any(Number), width: expect.any(Number) },
    ]);
    for (const chart of drawn) {
      expect(chart.total).toBeGreaterThanOrEqual(4);
      expect(chart.width).toBeGreaterThan(100);
    }
    const byState = await page.$$eval('main table tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    expect(byState.some((row) => /SUCCEEDED\s*[1-9]/.test(row))).toBe(true);
  });

  it('lists one state newest change first, for one merchant', async () => {
    await page.goto(`${consoleHandle.url}/payouts?state=REJECTED&merchant=${encodeURIComponent(stack.providerSecret?.platform_merchant_id ?? '')}`);
    const refs = await page.$$eval('tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
    expect(refs).toContain(scenario.rejected);
    const other = await page.goto(`${consoleHandle.url}/payouts?state=REJECTED&merchant=someone-else`);
    expect(other?.status()).toBe(200);
    expect(await page.$$eval('tbody tr', (trs) => trs.length)).toBe(0);
    const bad = await page.goto(`${consoleHandle.url}/payouts?state=PAID`);
    expect(bad?.status()).toBe(400);
    expect(await page.$eval('#problem', (e) => e.textContent)).toMatch(/^State: must be one of ACCEPTED/);
    // A forged cursor (a string where a shard's resume key goes) is the listing's 400, never DynamoDB's ValidationException.
    const forged = Buffer.from(JSON.stringify({ shards: ['x', 0, 0, 0] })).toString('base64url');
    for (const path of [`/payouts?state=SUCCEEDED&cursor=${forged}`, `/review?cursor=${forged}`]) {
      const answer = await page.goto(`${consoleHandle.url}${path}`);
      expect(answer?.status(), path).toBe(400);
      expect(await page.$eval('#problem', (e) => e.textContent), path).toMatch(/^this "next page" link is not one the console made for this search/);
      expect(await page.content(), path).not.toContain('ValidationException');
    }
  });

  it('finds a payout by reference and shows its timeline, masked account and callbacks', async () => {
    await page.goto(`${consoleHandle.url}/payouts`);
    await page.type('input[name=reference]', scenario.succeeded);
    await Promise.all([page.waitForNavigation(), page.click('form.search button')]);
    await Promise.all([page.waitForNavigation(), page.click(`a[href*="${encodeURIComponent(scenario.succeeded)}"]`)]);
    expect(await page.$eval('#payout-state', (e) => e.textContent)).toBe('SUCCEEDED');
    const timeline = await page.$$eval('#timeline li', (items) => items.map((li) => li.textContent ?? ''));
    expect(timeline.length).toBeGreaterThanOrEqual(3);
    expect(timeline.some((line) => line.includes('→ SUCCEEDED'))).toBe(true);
    const text = await page.$eval('main', (m) => m.textContent ?? '');
    expect(text).toContain('******6789');
    expect(text).not.toContain('0123456789');
    // The simulator's order notification about it, found through the events' reference index.
    const named = await page.$$eval('#named-callbacks tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    expect(named.length).toBeGreaterThan(0);
    expect(new Set(named)).toEqual(new Set(['payout-notification']));
  });

  it('renders a provider name holding <script> as inert text', async () => {
    await page.goto(`${consoleHandle.url}/payouts?reference=${encodeURIComponent(scenario.hostile)}`);
    await Promise.all([page.waitForNavigation(), page.click(`a[href*="${encodeURIComponent(scenario.hostile)}"]`)]);
    const text = await page.$eval('main', (m) => m.textContent ?? '');
    expect(text).toContain(HOSTILE_NAME);
    expect(await page.$$eval('main script, main img', (nodes) => nodes.length)).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it('answers a bad query parameter with a 400 page that says what is wrong', async () => {
    const answer = await page.goto(`${consoleHandle.url}/callbacks?day=2026-02-30`);
    expect(answer?.status()).toBe(400);
    expect(await page.$eval('#problem', (e) => e.textContent)).toBe('Day: is not a calendar day');
    expect(await page.content()).not.toMatch(/at .*\.ts:\d+/);
  });

  it('refuses an action without this start\'s CSRF token', async () => {
    const cookie = (await browser.cookies()).find((c) => c.name === 'payrelay_console');
    const answer = await fetch(`${consoleHandle.url}/callbacks/replay`, {
      method: 'POST',
      headers: { cookie: `payrelay_console=${cookie?.value}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z&step=confirm&csrf=forged',
    });
    expect(answer.status).toBe(403);
  });

  it('shows the callbacks of the day with a verbatim body viewer, and replays after a confirmation step', async () => {
    await page.goto(`${consoleHandle.url}/callbacks?source=payout-notification`);
    const rows = await page.$$eval('tbody tr', (trs) => trs.length);
    expect(rows).toBeGreaterThan(0);
    await Promise.all([page.waitForNavigation(), page.click('tbody tr a')]);
    const body = await page.$eval('#callback-body', (e) => e.textContent ?? '');
    expect(() => JSON.parse(body)).not.toThrow();
    // By reference, every day kept: the notifications naming the successful payout, and only those.
    await page.goto(`${consoleHandle.url}/callbacks?reference=${encodeURIComponent(scenario.succeeded)}`);
    const names = await page.$$eval('tbody tr td:nth-child(3)', (tds) => tds.map((td) => td.textContent));
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names)).toEqual(new Set([scenario.succeeded]));
    const badCursor = await page.goto(`${consoleHandle.url}/callbacks?cursor=not-a-cursor`);
    expect(badCursor?.status()).toBe(400);
    expect(await page.$eval('#problem', (e) => e.textContent)).toMatch(/^this "next page" link is not one the console made for this search/);
    await page.goto(`${consoleHandle.url}/callbacks`);
    await Promise.all([page.waitForNavigation(), page.click('form.action button')]);
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Replay callbacks?');
    await Promise.all([page.waitForNavigation(), page.click('#confirm')]);
    expect(await page.$eval('#done', (e) => e.textContent)).toMatch(/^Replayed \d+ stored callback/);
  });

  it('masks an account number inside a JSON document that a stored callback carries as a string', async () => {
    const { createEventStore } = await import('@shared/adapters/event-store');
    const events = createEventStore({ tableName: stack.env.EVENTS_TABLE_NAME as string });
    // As a provider or a queue wraps a payload: the document is the text of a string value.
    const payload = JSON.stringify({ beneficiary: { account_number: '0987654321', name: 'Kofi Mensah' }, amount: '75.00' });
    const body = JSON.stringify({ status: 'success', payload });
    const eventId = `payout-notification#${createHash('sha256').update(body).digest('hex')}`;
    const receivedAt = new Date();
    await events.putOnce({
      eventId,
      source: 'payout-notification',
      body,
      receivedAt: receivedAt.toISOString(),
      recognized: false,
      unrecognizedReason: 'no order_details (a wrapped payload)',
      expiresAt: Math.floor(receivedAt.getTime() / 1000) + 3600,
    });
    await page.goto(`${consoleHandle.url}/callbacks/view?id=${encodeURIComponent(eventId)}`);
    const text = await page.$eval('#callback-body', (e) => e.textContent ?? '');
    expect(text).not.toContain('0987654321');
    const shown = JSON.parse(text) as { status: string; payload: string };
    expect(shown.status).toBe('success');
    expect(JSON.parse(shown.payload)).toEqual({ beneficiary: { account_number: '******4321', name: 'Kofi Mensah' }, amount: '75.00' });
  });

  /** The text of each label of a form on the page, trimmed. */
  async function labelsOf(form: string): Promise<string[]> {
    return page.$$eval(`${form} label`, (labels) => labels.map((l) => (l.textContent ?? '').trim()));
  }

  /** Submits the form on the page and waits for the answer. */
  async function submit(selector: string): Promise<void> {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
  }

  it('settles a NEEDS_REVIEW payout through the resolve form, after a confirmation, and shows the audit entry in its timeline', async () => {
    await page.goto(`${consoleHandle.url}/review`);
    const rows = await page.$$eval('tbody tr td:first-child', (tds) => tds.map((td) => td.textContent));
    expect(rows).toContain(scenario.review);
    await submit(`tbody tr:nth-child(${rows.indexOf(scenario.review) + 1}) a.resolve`);
    expect(await page.$eval('#provider-answer', (e) => e.textContent)).toMatch(/^not found/);
    // The form speaks to a person: what each field is and whether it is required, never the CLI's options.
    expect(await labelsOf('form.resolve')).toEqual([
      expect.stringMatching(/^Outcome \(required\)/),
      'Evidence (required: what shows the outcome)',
      'Who resolves (your name, kept in the history)',
      "force: resolve against the provider's answer, on evidence that outweighs it (recorded as an override)",
    ]);
    expect(await page.$eval('main', (m) => m.textContent ?? '')).not.toContain('--');
    // An empty form is refused with what is missing, and nothing is written.
    const refused = await Promise.all([page.waitForNavigation(), page.click('form.resolve button')]);
    expect(refused[0]?.status()).toBe(400);
    expect(await page.$eval('#problem', (e) => e.textContent)).toMatch(/^Outcome: choose succeeded or failed; Evidence: is required/);
    // An outcome the provider contradicts is refused with the console's own way to force it (not the CLI's flag).
    const contradicted = await fetch(`${consoleHandle.url}/review/resolve?key=${encodeURIComponent(new URL(page.url()).searchParams.get('key') ?? '')}`, {
      method: 'POST',
      headers: { cookie: await sessionCookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: consoleHandle.secrets.csrf, as: 'succeeded', evidence: 'x', step: 'confirm' }).toString(),
    });
    expect(contradicted.status).toBe(409);
    const refusal = await contradicted.text();
    // What would settle it, and force only as the way to record that evidence.
    expect(refusal).toContain('nothing shows it was paid; what settles it is proof that the beneficiary was credited');
    expect(refusal).toContain('Only with that evidence in hand, go back, tick');
    expect(refusal).toMatch(/go back, tick (&quot;|&#34;|")force(&quot;|&#34;|")/);
    expect(refusal).not.toContain('--force');
    await submit('#back');
    await page.select('select[name=as]', 'failed');
    await page.type('textarea[name=evidence]', 'provider ticket 4711: never received');
    await page.$eval('input[name=by]', (e) => {
      (e as unknown as { value: string }).value = 'console-test';
    });
    await submit('form.resolve button');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe(`Resolve ${scenario.review} as FAILED?`);
    expect(await page.$$eval('main table tbody tr td:first-child', (tds) => tds.map((td) => td.textContent))).toEqual(['Outcome', 'Evidence', 'Who resolves', 'Force']);
    expect(await page.$eval('.confirm-what', (e) => e.textContent)).toContain('The provider says now: not found');
    await submit('#confirm');
    expect(await page.$eval('#done', (e) => e.textContent)).toMatch(new RegExp(`^${scenario.review} is now FAILED\\. Provider's answer recorded: not found`));
    await submit('#done + p a');
    expect(await page.$eval('#payout-state', (e) => e.textContent)).toBe('FAILED');
    const newest = await page.$eval('#timeline li', (li) => li.textContent ?? '');
    expect(newest).toContain('NEEDS_REVIEW → FAILED');
    // The identity running the console (the local stack: OS user@host) beside the name the form stated.
    const actor = `${userInfo().username}@${hostname()}`;
    expect(newest).toContain(`resolved as FAILED by console-test (as ${actor}): provider ticket 4711: never received`);
    // The actor and the evidence once each: the reason quotes them, the timeline does not repeat them.
    expect(newest.match(/console-test/g)).toHaveLength(1);
    expect(newest.split(actor)).toHaveLength(2);
    expect(newest.match(/provider ticket 4711/g)).toHaveLength(1);
    expect(newest).toMatch(/providerAnswer:\s*not found/);
    // The same form again is refused by the use case (the payout is final now), as a clear message.
    const again = await fetch(`${consoleHandle.url}/review/resolve?key=${encodeURIComponent(new URL(page.url()).searchParams.get('key') ?? '')}`, {
      method: 'POST',
      headers: { cookie: await sessionCookie(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: consoleHandle.secrets.csrf, as: 'succeeded', evidence: 'x', step: 'confirm' }).toString(),
    });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('is FAILED; only a NEEDS_REVIEW payout can be resolved');
  });

  it('retries a FAILED payout under a new reference, linked both ways', async () => {
    await page.goto(`${consoleHandle.url}/payouts?reference=${encodeURIComponent(scenario.failed)}`);
    await submit(`a[href*="${encodeURIComponent(scenario.failed)}"]`);
    expect(await page.$eval('#payout-state', (e) => e.textContent)).toBe('FAILED');
    await submit('#retry-link');
    const retryRef = `${scenario.failed}-R1`;
    expect(await page.$eval('input[name=new_reference]', (e) => (e as unknown as { value: string }).value)).toBe(retryRef);
    expect(await labelsOf('form.retry')).toEqual([
      "New payout's reference (required, unused)",
      'Full account number (only when asked)',
      'Who retries (your name, kept in the history)',
    ]);
    expect(await page.$eval('main', (m) => m.textContent ?? '')).not.toContain('--');
    await submit('form.retry button');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe(`Retry ${scenario.failed} as ${retryRef}?`);
    expect(await page.$$eval('main table tbody tr td:first-child', (tds) => tds.map((td) => td.textContent))).toEqual(["New payout's reference", 'Who retries']);
    await submit('#confirm');
    expect(await page.$eval('#done', (e) => e.textContent)).toBe(`${retryRef} was created (retry of ${scenario.failed}) and sent to the payouts queue.`);
    await submit('#done + p a');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe(`Payout ${retryRef}`);
    expect(await page.$eval('#retry-of', (e) => e.textContent)).toBe(scenario.failed);
    await submit('#retry-of');
    expect(await page.$eval('#retried-as', (e) => e.textContent)).toBe(retryRef);
    expect(await page.$$('#retry-link')).toHaveLength(0);
    expect(await page.$eval('#timeline li', (li) => li.textContent ?? '')).toContain(`retried as ${retryRef} by`);
  });

  it('lays out pages so nothing is cut: no sideways scroll, a header breaks only between words, reference and time fields show a whole value', async () => {
    // A typical reference of 28 characters, longer than the demo's DEMO-261124045053-01.
    const longReference = 'DEMO-261124045053-01-R1-WXYZ';
    for (const width of [1280, 480]) {
      await page.setViewport({ width, height: 900 });
      for (const path of ['/', '/dlq', '/payouts?state=SUCCEEDED', '/callbacks', '/collections', '/quarantine']) {
        await page.goto(`${consoleHandle.url}${path}`);
        // The page never scrolls sideways: the menu wraps, a wide table scrolls inside its own box.
        expect(await page.$eval('html', (e) => e.scrollWidth - e.clientWidth), `${path} at ${width}px: sideways overflow`).toBeLessThanOrEqual(0);
        // One line box per word at most: a header that wraps inside a word ("RECEI / VES") has more lines than words.
        const headers = await page.$$eval('th', (ths) =>
          ths
            .map((th) => {
              const range = th.ownerDocument.createRange();
              range.selectNodeContents(th);
              const text = (th.textContent ?? '').trim();
              return { text, words: text.split(/\s+/).length, lines: new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size };
            })
            .filter((h) => h.text !== ''),
        );
        expect(headers.length, path).toBeGreaterThan(0);
        for (const header of headers) expect(header.lines, `${path} at ${width}px: header ${header.text}`).toBeLessThanOrEqual(header.words);
      }
      for (const [path, field] of [['/payouts', 'reference'], ['/kyc', 'user_reference'], ['/callbacks', 'reference']] as const) {
        await page.goto(`${consoleHandle.url}${path}`);
        await page.type(`input[name=${field}]`, longReference);
        const fits = await page.$eval(`input[name=${field}]`, (e) => e.scrollWidth <= e.clientWidth);
        expect(fits, `${path} at ${width}px: ${field} holds ${longReference}`).toBe(true);
      }
      await page.goto(`${consoleHandle.url}/callbacks`);
      const times = await page.$$eval('form.action input.instant', (inputs) =>
        inputs.map((e) => ({ value: (e as unknown as { value: string }).value, fits: e.scrollWidth <= e.clientWidth })),
      );
      expect(times.map((t) => t.value)).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), expect.stringMatching(/Z$/)]);
      expect(times.every((t) => t.fits), `replay since/until at ${width}px`).toBe(true);
    }
    await page.setViewport({ width: 800, height: 600 });
  });

  it('lists the DLQ with reasons and masked accounts, and redrives a message after a confirmation', async () => {
    await page.goto(`${consoleHandle.url}/dlq/redrive`);
    expect(await labelsOf('form.redrive')).toEqual(['How many at most (empty: all of them)']);
    await page.goto(`${consoleHandle.url}/dlq`);
    const rows = await page.$$eval('tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    const index = rows.findIndex((row) => row.includes(scenario.deadLetter));
    expect(index).toBeGreaterThanOrEqual(0);
    expect(rows[index]).toContain(DEAD_LETTER_REASON);
    expect(rows[index]).toContain('******4050');
    expect(rows.join(' ')).not.toContain('1020304050');
    await submit(`tbody tr:nth-child(${index + 1}) a.redrive`);
    await submit('form.redrive button');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Redrive this message?');
    await submit('#confirm');
    expect(await page.$eval('#done', (e) => e.textContent)).toMatch(/^Moved 1 message\(s\) to the payouts queue/);
    await page.goto(`${consoleHandle.url}/dlq`);
    expect(await page.$eval('main', (m) => m.textContent ?? '')).not.toContain(scenario.deadLetter);
    // The worker takes the redriven request: the payout appears.
    const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
    const repository = createPayoutRepository(stack.env.PAYOUTS_TABLE_NAME as string);
    await expect.poll(async () => (await repository.findByReference(scenario.deadLetter)).length, { timeout: 15_000, interval: 300 }).toBe(1);
  });

  it('lists the quarantine, shows a kept notification as received, and calibrates the scheme from them', async () => {
    await page.goto(`${consoleHandle.url}/quarantine`);
    const rows = await page.$$eval('tbody tr', (trs) => trs.map((tr) => tr.textContent ?? ''));
    const index = rows.findIndex((row) => row.includes(scenario.quarantined));
    expect(index).toBeGreaterThanOrEqual(0);
    await submit(`tbody tr:nth-child(${index + 1}) a.view`);
    const text = await page.$eval('#quarantine-body', (e) => e.textContent ?? '');
    const body = JSON.parse(text) as { data: { order_details: { partner_order_id: string }; beneficiary: unknown }; signature: string };
    expect(body.data.order_details.partner_order_id).toBe(scenario.quarantined);
    // Account and phone numbers masked whatever their JSON type; the amount beside them shown as sent.
    expect(body.data.beneficiary).toEqual({ account_number: '******7890', accountNumber: ['******6677'], phoneNumber: '*********3456', amount: 250075 });
    for (const full of ['1234567890', '5555666677', '233244123456']) expect(text).not.toContain(full);
    expect(body.signature).toEqual(expect.any(String));
    const missing = await page.goto(`${consoleHandle.url}/quarantine/view?id=2020-01-01.0000000000000000`);
    expect(missing?.status()).toBe(404);
    await page.goto(`${consoleHandle.url}/quarantine`);
    await submit('form.calibrate button');
    expect(await page.$eval('#calibration', (e) => e.textContent)).toMatch(/^Set SIGNING_PROFILE=\S+: it reproduces every one of the \d+ notification/);
    expect(await page.$eval('#calibration code', (e) => e.textContent)).toBe(`SIGNING_PROFILE=${PROVIDER_PROFILE}`);
  });

  it('lists the collection orders and shows one with its statuses, masked virtual account and changes', async () => {
    await page.goto(`${consoleHandle.url}/collections?payment_status=PENDING`);
    await submit(`a[href*="${encodeURIComponent(scenario.collection)}"]`);
    expect(await page.$eval('h1', (h) => h.textContent)).toBe(`Collection ${scenario.collection}`);
    expect(await page.$eval('#order-status', (e) => e.textContent)).toBe('PENDING');
    expect(await page.$eval('#payment-status', (e) => e.textContent)).toBe('PENDING');
    const text = await page.$eval('main', (m) => m.textContent ?? '');
    expect(text).toMatch(/\*{4,}\d{4}/);
    // The changes are the page's last table.
    const changes = await page.$$eval('main table', (tables) => [...(tables.at(-1)?.querySelectorAll('tbody tr') ?? [])].map((tr) => tr.textContent ?? ''));
    expect(changes).toEqual([
      expect.stringContaining('provider accepted'),
      expect.stringContaining('created'),
    ]);
    const paid = await page.goto(`${consoleHandle.url}/collections?payment_status=PAID`);
    expect(paid?.status()).toBe(200);
    expect(await page.$$(`a[href*="${encodeURIComponent(scenario.collection)}"]`)).toHaveLength(0);
    const wrong = await page.goto(`${consoleHandle.url}/collections?order_status=DONE`);
    expect(wrong?.status()).toBe(400);
    expect(await page.$eval('#problem', (e) => e.textContent)).toMatch(/^Order status: must be one of PENDING/);
    const missing = await page.goto(`${consoleHandle.url}/collections/view?id=no-such-order`);
    expect(missing?.status()).toBe(404);
  });

  it('marks a collection whose final order status a later notification contradicted, in the list and on its page', async () => {
    await page.goto(`${consoleHandle.url}/collections?order_status=EXPIRED`);
    const row = await page.$eval(`tr:has(a[href*="${encodeURIComponent(scenario.contradictedCollection)}"])`, (tr) => tr.textContent ?? '');
    expect(row).toContain('EXPIRED contradicted by COMPLETED');
    await submit(`a[href*="${encodeURIComponent(scenario.contradictedCollection)}"]`);
    expect(await page.$eval('#order-status', (e) => e.textContent)).toBe('EXPIRED');
    expect(await page.$eval('#contradicted-by', (e) => e.textContent)).toBe(
      'COMPLETED: later notifications gave another final order status. EXPIRED (the first) stays; settle with the provider which is true.',
    );
    const changes = await page.$$eval('main table', (tables) => [...(tables.at(-1)?.querySelectorAll('tbody tr') ?? [])].map((tr) => tr.textContent ?? ''));
    expect(changes[0]).toContain('order status COMPLETED contradicts the final EXPIRED');
  });

  async function sessionCookie(): Promise<string> {
    const cookie = (await browser.cookies()).find((c) => c.name === 'payrelay_console');
    return `payrelay_console=${cookie?.value}`;
  }
});
