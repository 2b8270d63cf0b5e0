import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { launchBrowser, runConsoleScenario, targetOf } from './console-fixture';

/*
 * `npm run console:screenshots`: the pictures in docs/console/. Starts the local stack in-process,
 * runs the demo and the console test's scenario through it, starts the console and saves one PNG per
 * page. Run it again after changing a page; the PNGs are committed.
 */

const OUT_DIR = resolve(import.meta.dirname, '../../docs/console');

async function main(): Promise<void> {
  const { startLocalStack } = await import('@local/stack');
  const stack = await startLocalStack({ gatewayPort: 0, simulatorPort: 0, reconcileEveryMs: 1000, pollWaitSeconds: 1 });
  const target = targetOf(stack);
  const browser = await launchBrowser();
  try {
    const { runDemo } = await import('@cli/demo-scenario');
    const demo = await runDemo(target, (line) => process.stderr.write(`demo: ${line}\n`), { timeoutMs: 120_000, pollMs: 500 });
    const scenario = await runConsoleScenario(stack);
    const { createConsoleServices } = await import('@cli/console/services');
    const { startConsole } = await import('@cli/console/server');
    const consoleHandle = await startConsole({ services: await createConsoleServices(target), port: 0 });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(consoleHandle.loginUrl);
      const timedOut = demo.payouts.find((p) => p.role === 'ambiguous time-out')?.withdrawal_reference ?? scenario.succeeded;
      const shots: Array<[string, string]> = [
        ['overview', '/'],
        // A state listing shows more of the page than one payout; the search by reference gets its own picture.
        ['payouts', '/payouts?state=SUCCEEDED'],
        ['payouts-by-reference', `/payouts?reference=${encodeURIComponent(timedOut)}`],
        ['review', '/review'],
        ['callbacks', '/callbacks'],
        ['kyc', `/kyc?user_reference=${encodeURIComponent(demo.kyc.userReference)}`],
        ['dlq', '/dlq'],
        ['quarantine', '/quarantine'],
        ['collections', '/collections'],
        ['collection', `/collections/view?id=${encodeURIComponent(scenario.collection)}`],
      ];
      const repository = (await import('@shared/adapters/payout-repository')).createPayoutRepository(stack.env.PAYOUTS_TABLE_NAME as string);
      const [firstPayout, inReview, failed] = await Promise.all([
        repository.findByReference(timedOut),
        repository.findByReference(scenario.review),
        repository.findByReference(scenario.failed),
      ]);
      const { payoutKey } = await import('@shared/domain/identity');
      if (firstPayout[0]) shots.push(['payout', `/payouts/view?key=${encodeURIComponent(payoutKey(firstPayout[0].record.identity))}`]);
      if (inReview[0]) shots.push(['resolve', `/review/resolve?key=${encodeURIComponent(payoutKey(inReview[0].record.identity))}`]);
      if (failed[0]) shots.push(['retry', `/payouts/retry?key=${encodeURIComponent(payoutKey(failed[0].record.identity))}`]);
      mkdirSync(OUT_DIR, { recursive: true });
      for (const [name, path] of shots) {
        await page.goto(`${consoleHandle.url}${path}`, { waitUntil: 'networkidle0' });
        const file = resolve(OUT_DIR, `${name}.png`);
        await page.screenshot({ path: file as `${string}.png`, fullPage: true });
        process.stderr.write(`saved ${file}\n`);
      }
    } finally {
      await consoleHandle.close();
    }
  } finally {
    await browser.close();
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`console:screenshots failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
