import { basename, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Command } from 'commander';
import { LOCAL_STATE_PATH } from '@local/state';
import { contextOf, nonEmptyText, withExample, type CommandContext } from '../context';
import type { EnqueueReport } from '../enqueue';
import { checkPayoutFile, formatOf, formatRowError, payoutFileSize, payoutRequests, type PayoutFileCheck } from '../payout-file';
import { CliError, EXIT, describeError, printTable, shellWord, printLine, printErrorLine } from '../output';
import { startProgress } from '../progress';
import { requireEnv, type Target } from '../target';
import { targetFingerprints } from '../operator';

interface EnqueueOpts {
  file: string;
  dryRun?: boolean;
  merchant?: string;
  resendAccepted?: boolean;
  resendAuthorized?: boolean;
}

/** Where `payouts enqueue` keeps its write-ahead journals (next to the local state file, git-ignored). */
export const ENQUEUE_JOURNAL_DIR = join(dirname(LOCAL_STATE_PATH), 'enqueue-journal');

/** Exit codes of a run stopped by a signal: 128 + the signal's number, as shells report it. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

/**
 * The platform_merchant_id of the target's provider secret: the only merchant this deployment pays
 * for (the worker REJECTs a request naming another one, for good).
 */
async function deploymentMerchant(target: Target): Promise<string> {
  const secretId = requireEnv(target, 'PROVIDER_SECRET_ID');
  const { cachedSecret, providerSecretSchema } = await import('@shared/adapters/secrets');
  try {
    return (await cachedSecret(secretId, providerSecretSchema, 0).get()).platform_merchant_id;
  } catch (error) {
    throw new CliError(
      `cannot read the provider secret of ${target.label} to learn its platform_merchant_id (${describeError(error)}); ` +
        'store it with `payrelay secrets put provider`, or check a file offline with --dry-run --merchant <id>',
    );
  }
}

/** The command line to run again, as the operator typed it (arguments with blanks quoted). */
function sameCommand(): string {
  return `payrelay ${process.argv.slice(2).map(shellWord).join(' ')}`;
}

function printErrors(ctx: CommandContext, file: string, check: PayoutFileCheck, merchant: string | undefined): never {
  ctx.out.result({ valid: false, rows: check.rows, errorCount: check.errorCount, errors: check.errors, otherMerchants: check.otherMerchants }, () => {
    for (const error of check.errors) printErrorLine(formatRowError(error));
    if (check.errorCount > check.errors.length) printErrorLine(`... and ${check.errorCount - check.errors.length} more error(s)`);
  });
  const others = Object.entries(check.otherMerchants);
  const merchantNote =
    others.length > 0
      ? `; ${others.reduce((n, [, c]) => n + c, 0)} row(s) name another merchant than ${merchant} (this deployment's): ` +
        others.map(([m, c]) => `${m} (${c})`).join(', ')
      : '';
  throw new CliError(`${check.errorCount} error(s) in ${basename(file)}${merchantNote}; nothing was enqueued`, EXIT.invalidInput);
}

/** Seconds spent checking the file and sending its rows (process start not included). */
export interface Timing {
  readonly checkSeconds: number;
  sendSeconds: number;
}

/**
 * The summary's last line: how long the check and the send took. When nothing was sent (a re-run of a
 * file already enqueued), it says so and why instead: a send time and a rate would describe rows that
 * were only found already recorded.
 */
export function timingLine(rows: number, report: EnqueueReport, timing: Timing): string {
  const checked = `checked in ${timing.checkSeconds.toFixed(1)} s`;
  if (report.enqueued.length === 0) return `${checked}; nothing sent: ${whyNothingSent(rows, report)}`;
  const perSecond = timing.sendSeconds > 0 ? ` (${Math.round(report.handled / timing.sendSeconds)} rows/s)` : '';
  return `${checked}, sent in ${timing.sendSeconds.toFixed(1)} s${perSecond}`;
}

function whyNothingSent(rows: number, report: EnqueueReport): string {
  if (report.skipped.length === rows) {
    // Skipped: the payout exists, and the journal holds no earlier stopped run that left it unsent.
    return `all ${rows} row(s) are already recorded, so an earlier run enqueued them (and no stopped run left any of them unsent); their states are above`;
  }
  const reasons: Array<[number, string]> = [
    [report.skipped.length, 'already recorded'],
    [report.conflicts.length, 'recorded with other data (conflict lines above)'],
    [report.failed.length, 'refused by the queue'],
    [rows - report.handled, 'not reached'],
  ];
  return reasons
    .filter(([n]) => n > 0)
    .map(([n, why], i) => `${n}${i === 0 ? ' row(s)' : ''} ${why}`)
    .join(', ');
}

function printReport(ctx: CommandContext, rows: number, report: EnqueueReport, timing: Timing): void {
  ctx.out.result({ rows, ...report, timing }, () => {
    printTable(
      ['rows', 'enqueued', 'of which recovered', 'skipped (already recorded)', 'conflicts', 'failed', 'not reached'],
      [[rows, report.enqueued.length, report.recovered.length, report.skipped.length, report.conflicts.length, report.failed.length, rows - report.handled]],
    );
    if (report.skipped.length > 0) {
      printTable(['skipped reference', 'current state'], report.skipped.slice(0, 20).map((s) => [s.withdrawal_reference, s.state]));
      if (report.skipped.length > 20) printLine(`... and ${report.skipped.length - 20} more`);
    }
    for (const c of report.conflicts.slice(0, 20)) {
      printErrorLine(`conflict: ${c.withdrawal_reference}: ${c.differ.join(', ')} ${c.differ.length === 1 ? 'differs' : 'differ'} from the payout recorded under it (${c.state})`);
    }
    if (report.conflicts.length > 20) printErrorLine(`... and ${report.conflicts.length - 20} more conflicts`);
    for (const f of report.failed.slice(0, 20)) printErrorLine(`not sent: ${f.withdrawal_reference}: ${f.reason}`);
    if (report.failed.length > 20) printErrorLine(`... and ${report.failed.length - 20} more not sent`);
    printLine(timingLine(rows, report, timing));
  });
}

/**
 * Stops the run gracefully on the first Ctrl-C or SIGTERM (the batches in flight finish), at once on
 * the second (the journal lets a rerun complete it). Returns the signal seen, if any, and a remover.
 */
function stopOnSignals(ctx: CommandContext, controller: AbortController, onHardStop: () => void): { signal(): NodeJS.Signals | undefined; remove(): void } {
  let seen: NodeJS.Signals | undefined;
  const handler = (signal: NodeJS.Signals): void => {
    if (seen) {
      onHardStop();
      ctx.out.note(`payrelay: stopped at once. Run the same command again to complete the enqueue: ${sameCommand()}`);
      process.exit(SIGNAL_EXIT[signal as keyof typeof SIGNAL_EXIT] ?? 1);
    }
    seen = signal;
    ctx.out.note(`\n${signal}: finishing the batches in flight, then stopping (${signal === 'SIGINT' ? 'Ctrl-C' : 'signal'} again to stop at once)`);
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: () => seen,
    remove() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

async function enqueueAction(opts: EnqueueOpts, cmd: Command): Promise<void> {
  const ctx = contextOf(cmd);
  // A missing file or a directory is said as such first; then the name must tell the format.
  const size = payoutFileSize(opts.file);
  const format = formatOf(opts.file);
  if (!format) throw new CliError(`${opts.file}: the name must end in .csv, or in .jsonl or .ndjson for one JSON object a line`, EXIT.invalidInput);

  // The merchant first: a file for another merchant is refused before anything is created.
  // Offline only without --stack: a dry run against a deployed stack also checks --merchant is its merchant.
  const offline = opts.dryRun === true && opts.merchant !== undefined && ctx.globals.stack === undefined;
  const target = offline ? undefined : await ctx.target();
  let merchant = opts.merchant;
  if (target) {
    const own = await deploymentMerchant(target);
    if (merchant !== undefined && merchant !== own) {
      throw new CliError(`--merchant ${merchant} is not the merchant of ${target.label} (${own}); nothing was enqueued`, EXIT.invalidInput);
    }
    merchant = own;
  }

  const checkStarted = performance.now();
  const reading = startProgress(`checking ${basename(opts.file)}`, size, 'MB', (n) => Math.round(n / 1e5) / 10);
  let check: PayoutFileCheck;
  try {
    check = await checkPayoutFile(opts.file, format, { merchant, onBytes: (b) => reading.update(b) });
  } finally {
    reading.stop();
  }
  const timing: Timing = { checkSeconds: (performance.now() - checkStarted) / 1000, sendSeconds: 0 };
  if (check.errorCount > 0) printErrors(ctx, opts.file, check, merchant);
  if (opts.dryRun || !target) {
    ctx.out.result({ valid: true, rows: check.rows, merchant }, () =>
      printLine(`${check.rows} row(s) valid for merchant ${merchant}; nothing sent (--dry-run).`),
    );
    return;
  }

  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const { sqsClient } = await import('@shared/adapters/sqs-client');
  const { enqueuePayouts, EnqueueStoppedError } = await import('../enqueue');
  const { openEnqueueJournal } = await import('../enqueue-journal');
  const tableName = requireEnv(target, 'PAYOUTS_TABLE_NAME');
  const queueUrl = requireEnv(target, 'PAYOUTS_QUEUE_URL');
  const journal = openEnqueueJournal(ENQUEUE_JOURNAL_DIR, `${tableName} ${queueUrl}`);
  const controller = new AbortController();
  const sending = startProgress('enqueue', check.rows, 'rows');
  const signals = stopOnSignals(ctx, controller, () => sending.stop());
  let report: EnqueueReport;
  const sendStarted = performance.now();
  try {
    report = await enqueuePayouts(
      payoutRequests(opts.file, format),
      {
        repository: createPayoutRepository(tableName),
        sqs: sqsClient(),
        queueUrl,
        fingerprints: await targetFingerprints(target),
        journal,
        signal: controller.signal,
        onProgress: (done) => sending.update(done),
      },
      { resendAccepted: opts.resendAccepted === true, resendAuthorized: opts.resendAuthorized === true },
    );
  } catch (error) {
    sending.stop();
    if (!(error instanceof EnqueueStoppedError)) throw error;
    timing.sendSeconds = (performance.now() - sendStarted) / 1000;
    printReport(ctx, check.rows, error.report, timing);
    throw new CliError(
      `enqueue stopped: ${describeError(error.cause)}. ${error.report.enqueued.length} of ${check.rows} row(s) were sent; ` +
        `nothing is lost: run the same command again to complete it: ${sameCommand()}`,
    );
  } finally {
    sending.stop();
    signals.remove();
    const { pendingFromEarlierRuns } = journal.close();
    if (pendingFromEarlierRuns > 0) {
      ctx.out.note(
        `note: ${pendingFromEarlierRuns} payout(s) recorded by an earlier stopped enqueue are not in this file and may not have been sent: ` +
          'run that file again to send them',
      );
    }
  }
  timing.sendSeconds = (performance.now() - sendStarted) / 1000;
  printReport(ctx, check.rows, report, timing);
  const signal = signals.signal();
  if (report.interrupted && signal) {
    throw new CliError(
      `stopped by ${signal}: ${report.enqueued.length} row(s) sent, ${report.skipped.length} skipped, ${check.rows - report.handled} not reached. ` +
        `Run the same command again to enqueue the rest: ${sameCommand()}`,
      SIGNAL_EXIT[signal as keyof typeof SIGNAL_EXIT] ?? 1,
    );
  }
  if (report.failed.length > 0) {
    throw new CliError(`${report.failed.length} message(s) not sent (their payouts are recorded ACCEPTED): run the same command again to send them: ${sameCommand()}`);
  }
  if (report.conflicts.length > 0) {
    throw new CliError(
      `${report.conflicts.length} row(s) name a reference already recorded with other data; nothing was sent for them, and the recorded payouts go ahead as first recorded. ` +
        'To pay a corrected row, give it a new withdrawal_reference (and settle the recorded one: `payrelay payouts status <reference>`)',
      EXIT.invalidInput,
    );
  }
}

/** `payrelay payouts enqueue`. */
export function registerEnqueueCommand(payouts: Command): void {
  withExample(
    payouts
      .command('enqueue')
      .requiredOption('--file <file>', 'payouts as .csv (header row) or .jsonl (one JSON object per line)', nonEmptyText)
      .option('--dry-run', 'validate only; send nothing')
      .option(
        '--merchant <platform_merchant_id>',
        "the merchant every row must name (default: the target's, from its provider secret); with --dry-run and no --stack, checks a file without any stack",
        nonEmptyText,
      )
      .option('--resend-accepted', 'also send rows whose payout exists but is still ACCEPTED (recovery when the journal of a stopped run is lost)')
      .option(
        '--resend-authorized',
        'also send rows whose UNKNOWN payout the reconciler authorized for one resubmission (RESUBMIT_UNKNOWN_NOT_FOUND)',
      ),
    'payrelay payouts enqueue --file docs/examples/payouts.csv   # five payouts to try on npm start',
    'payrelay payouts enqueue --file payouts.csv',
    'payrelay payouts enqueue --file payouts.jsonl --dry-run',
    'payrelay payouts enqueue --file payouts.csv --dry-run --merchant local-merchant-1   # no stack needed',
    'payrelay payouts enqueue --file payouts.csv --resend-authorized',
  )
    .summary('check every row of a CSV or JSONL file, then enqueue them (nothing twice, however often it runs)')
    .description(
      "validate every row (all errors reported with row numbers, nothing sent if any; rows must name the deployment's merchant), " +
        'then enqueue in batches of 10. Each payout is recorded before its message is sent, so running the same file again ' +
        'enqueues nothing twice and completes a run that was stopped (Ctrl-C, SIGTERM, a crash). ' +
        'Columns: platform_merchant_id, currency, withdrawal_reference, amount, account_number, account_code, ' +
        'expected_name, user_reference, metadata (JSON) or metadata.<key>.',
    )
    .action(enqueueAction);
}
