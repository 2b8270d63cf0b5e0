import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono, type Context } from 'hono';
import { html } from 'hono/html';
import { DeadLetterNotFoundError, InvalidOperatorInputError, OperatorActionRefusedError, PayoutNotFoundError } from '@shared/app/operator-errors';
import { CollectionNotFoundError, CollectionQueryError } from '@shared/app/collections';
import { ConcurrentModificationError } from '@shared/domain/errors';
import { page, problemPage, type Html, type PageContext } from './layout';
import { BadRequestError, NotFoundError } from './query';
import { hostCheck, securityHeaders, tokenGate, validPost, type ConsoleSecrets } from './security';
import type { ConsoleServices } from './services';
import { consoleLog } from './log';
import { callbacksPage, callbackViewPage, replayAction } from './pages/callbacks';
import { kycConfirmAction, kycPage } from './pages/kyc';
import { overviewFigures, overviewPage, overviewSnapshots } from './pages/overview';
import { payoutDetailPage, payoutsPage } from './pages/payouts';
import { resolveAction, resolveFormPage, reviewPage } from './pages/review';
import { retryAction, retryFormPage } from './pages/retry';
import { collectionsPage, collectionViewPage } from './pages/collections';
import { calibrateAction, quarantinePage, quarantineViewPage } from './pages/quarantine';
import { deleteAction, deleteFormPage, dlqMessagePage, dlqPage, redriveAction, redriveFormPage } from './pages/dlq';

type Env = { Variables: { form: Record<string, unknown> } };

/** The static files the pages load: the console's own script and style, and Chart.js from node_modules. */
function staticFiles(): Map<string, { body: string; type: string }> {
  const here = dirname(fileURLToPath(import.meta.url));
  const chartDir = dirname(createRequire(import.meta.url).resolve('chart.js'));
  return new Map([
    ['console.js', { body: readFileSync(join(here, 'static/console.js'), 'utf8'), type: 'text/javascript; charset=utf-8' }],
    ['console.css', { body: readFileSync(join(here, 'static/console.css'), 'utf8'), type: 'text/css; charset=utf-8' }],
    ['chart.umd.min.js', { body: readFileSync(join(chartDir, 'chart.umd.min.js'), 'utf8'), type: 'text/javascript; charset=utf-8' }],
  ]);
}

export interface ConsoleAppOptions {
  readonly services: ConsoleServices;
  readonly secrets: ConsoleSecrets;
  /** The port the server listens on (known only after listen when 0 was asked for). */
  readonly port: () => number;
  readonly clock?: () => Date;
}

/**
 * The console's routes. Every request passes the Host check (DNS rebinding), then the token gate;
 * every POST also needs the CSRF token. Errors map in one place (`onError`): wrong input is a 400
 * page with its message, a missing thing 404, an action the use case refused (or a payout changed
 * meanwhile) 409, anything else a 500 page that names the error's class and says where the details
 * went (stderr), never its message or a stack trace.
 */
export function createConsoleApp(options: ConsoleAppOptions): Hono<Env> {
  const { services, secrets } = options;
  const now = options.clock ?? (() => new Date());
  const ctx: PageContext = { targetLabel: services.target.label, csrf: secrets.csrf, ...(services.target.kycNotDeployed ? { kycNotDeployed: true } : {}) };
  const files = staticFiles();
  const overview = overviewSnapshots(() => overviewFigures(services, now()), now);
  overview.warm();
  const app = new Hono<Env>();

  const render = async (c: Context, body: Html | Promise<Html>, status: 200 | 400 | 401 | 403 | 404 | 409 | 500 = 200) => c.html(await body, status);
  const unauthorized = (c: Context) => {
    consoleLog.warn('console request refused: no valid token', { path: c.req.path });
    return c.html(
      html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>401 · payrelay console</title></head><body><h1>401: not signed in</h1><p>Open the URL that <code>payrelay console</code> printed (it carries this start's token). Each start prints a new one.</p></body></html>`,
      401,
    );
  };

  app.use('*', securityHeaders);
  app.use('*', hostCheck(options.port));
  app.use('*', tokenGate(secrets, unauthorized));
  app.use('*', async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const form = await c.req.parseBody();
    if (!validPost(c, form, secrets)) {
      consoleLog.warn('console action refused: missing or wrong CSRF token, or another origin', { path: c.req.path });
      return render(c, problemPage(ctx, '403: action refused', 'This form is not from this console start (CSRF check failed). Reload the page and try again.'), 403);
    }
    c.set('form', form);
    return next();
  });
  const formOf = (c: Context<Env>): Record<string, unknown> => c.get('form');

  app.get('/static/:file', (c) => {
    const file = files.get(c.req.param('file'));
    if (!file) return c.text('not found', 404);
    c.header('Content-Type', file.type);
    return c.body(file.body);
  });

  app.get('/', async (c) => render(c, overviewPage(ctx, overview)));
  app.get('/payouts', async (c) => render(c, payoutsPage(ctx, services, c.req.query())));
  app.get('/payouts/view', async (c) => render(c, payoutDetailPage(ctx, services, c.req.query())));
  app.get('/review', async (c) => render(c, reviewPage(ctx, services, c.req.query())));
  app.get('/review/resolve', async (c) => render(c, resolveFormPage(ctx, services, c.req.query())));
  app.post('/review/resolve', async (c) => render(c, resolveAction(ctx, services, c.req.query(), formOf(c))));
  app.get('/payouts/retry', async (c) => render(c, retryFormPage(ctx, services, c.req.query())));
  app.post('/payouts/retry', async (c) => render(c, retryAction(ctx, services, c.req.query(), formOf(c))));
  app.get('/dlq', async (c) => render(c, dlqPage(ctx, services)));
  app.get('/dlq/view', async (c) => render(c, dlqMessagePage(ctx, services, c.req.query())));
  app.get('/dlq/redrive', (c) => render(c, redriveFormPage(ctx, c.req.query())));
  app.post('/dlq/redrive', async (c) => render(c, redriveAction(ctx, services, c.req.query(), formOf(c))));
  app.get('/dlq/delete', async (c) => render(c, deleteFormPage(ctx, services, c.req.query())));
  app.post('/dlq/delete', async (c) => render(c, deleteAction(ctx, services, c.req.query(), formOf(c))));
  app.get('/callbacks', async (c) => render(c, callbacksPage(ctx, services, c.req.query(), now())));
  app.get('/callbacks/view', async (c) => render(c, callbackViewPage(ctx, services, c.req.query())));
  app.post('/callbacks/replay', async (c) => render(c, replayAction(ctx, services, formOf(c), now())));
  app.get('/collections', async (c) => render(c, collectionsPage(ctx, services, c.req.query(), now())));
  app.get('/collections/view', async (c) => render(c, collectionViewPage(ctx, services, c.req.query())));
  app.get('/quarantine', async (c) => render(c, quarantinePage(ctx, services, c.req.query(), now())));
  app.get('/quarantine/view', async (c) => render(c, quarantineViewPage(ctx, services, c.req.query())));
  app.post('/quarantine/calibrate', async (c) => render(c, calibrateAction(ctx, services, formOf(c), now())));
  app.get('/kyc', async (c) => render(c, kycPage(ctx, services, c.req.query())));
  app.post('/kyc/confirm', async (c) => render(c, kycConfirmAction(ctx, services, formOf(c), now())));

  app.notFound((c) => render(c, problemPage(ctx, '404: no such page', `There is no page ${c.req.path}.`), 404));
  /** Where "Back" on a problem page leads after a refused action: the console page the form came from. */
  const backOf = (c: Context): string | undefined => {
    const referer = c.req.header('referer');
    if (c.req.method !== 'POST' || !referer) return undefined;
    // A Referer that is not a URL leads nowhere; it must not make the error handler itself fail.
    if (!URL.canParse(referer)) return undefined;
    const from = new URL(referer);
    return from.host === c.req.header('host') ? `${from.pathname}${from.search}` : undefined;
  };
  app.onError((error, c) => {
    if (error instanceof BadRequestError || error instanceof InvalidOperatorInputError || error instanceof CollectionQueryError) {
      consoleLog.warn('console: bad request', { path: c.req.path, reason: error.message });
      return render(c, problemPage(ctx, '400: bad request', error.message, backOf(c)), 400);
    }
    if (error instanceof NotFoundError || error instanceof PayoutNotFoundError || error instanceof DeadLetterNotFoundError || error instanceof CollectionNotFoundError) {
      return render(c, problemPage(ctx, '404: not found', error.message, backOf(c)), 404);
    }
    if (error instanceof OperatorActionRefusedError) {
      consoleLog.warn('console: action refused', { path: c.req.path, reason: error.message });
      // The use case says what evidence settles it; force is named only as the way to record that evidence.
      const words = !error.forcible
        ? error.message
        : c.req.path.startsWith('/payouts/retry')
          ? `${error.message}. The console does not retry against the provider's answer, since that can pay twice: only with the provider's written confirmation that the first payout was never executed, an operator runs payrelay payouts retry with its force option and that confirmation as evidence, which records it in both payouts' histories.`
          : `${error.message}. Only with that evidence in hand, go back, tick "force" and quote it in the evidence: the override is recorded in the history, and a FAILED forced on a payout the provider did execute risks paying twice.`;
      return render(c, problemPage(ctx, '409: refused', words, backOf(c)), 409);
    }
    if (error instanceof ConcurrentModificationError) {
      consoleLog.warn('console: action refused, changed meanwhile', { path: c.req.path });
      return render(c, problemPage(ctx, '409: changed meanwhile', 'Someone (or the reconciler) changed this payout while you looked at it; nothing was written. Open it again and look before you act.', backOf(c)), 409);
    }
    // A KYC page of a stack whose stage leaves KYC out (cli/target.ts): its words say how to turn KYC on.
    if (error.name === 'KycNotDeployedError') {
      return render(c, problemPage(ctx, '409: KYC is not deployed', error.message, backOf(c)), 409);
    }
    // Matched by name, as the CLI does, so the console need not load the secrets adapter early.
    if (error.name === 'SecretNotConfiguredError' || error.name === 'SecretFormatError') {
      consoleLog.warn('console: a secret is not set up', { path: c.req.path, reason: error.message });
      return render(c, problemPage(ctx, '409: not configured', error.message, backOf(c)), 409);
    }
    consoleLog.error('console: request failed', { path: c.req.path, error: error.name, reason: error.message });
    return render(
      c,
      // The message may carry what a dependency said (a DynamoDB error, a path, a value): it goes to the log line only.
      page(ctx, '500: the request failed', '', html`<p class="problem">The request failed inside the console (${error.name}).</p><p>The console's terminal has the log line with the details.</p>`),
      500,
    );
  });
  return app;
}
