import { Option, type Command } from 'commander';
import { maskAccountsInJsonText } from '@shared/domain/account';
import { CALLBACK_SOURCES, receivedDayOf, type CallbackSource } from '@shared/domain/callbacks';
import { calendarDay, contextOf, listLimit, nonEmptyText, parseSince, positiveInt, refuseEmptyRange, timeArg, withExample } from '../context';
import type { StoredEvent } from '@shared/ports/callbacks';
import { CliError, EXIT, optionsText, printBody, printListing, printRecord, printTable, printLine } from '../output';
import { requireEnv } from '../target';
import { cliLog, noTelemetry } from '../log';
import type { UnrecognizedEvent } from '@shared/app/replay-events';

/** `payrelay events list|show|replay` and the quarantine's commands. */
export function registerEventsCommands(program: Command): void {
  const events = withExample(program.command('events').description('stored callbacks: list them, re-apply them (replay), an upgrade\'s backfill, and the quarantine of notifications whose signature did not match'), 'payrelay events list --reference WD-2024-0001', 'payrelay events show <event id>', 'payrelay events replay --since 6h');
  timeRangeCommand(events, 'replay', '30m, 6h, 2d', 'payrelay events replay --since 6h', 'payrelay events replay --since 2026-11-20T00:00:00Z --until 2026-11-21T00:00:00Z')
    .description('re-apply the stored callbacks of a time range: KYC callbacks to the KYC subjects, order notifications to the collections they name (idempotent; notifications about payouts are left to the reconciler)')
    .action(async (opts: TimeRangeOptions, cmd: Command) => {
      const ctx = contextOf(cmd);
      const range = rangeOf(opts);
      const target = await ctx.target();
      const { replayEvents } = await import('@shared/app/replay-events');
      const { createEventStore } = await import('@shared/adapters/event-store');
      const { createKycRepository } = await import('@shared/adapters/kyc-repository');
      const { createCollectionRepository } = await import('@shared/adapters/collection-repository');
      const result = await replayEvents(
        {
          events: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }),
          // A stack whose stage leaves KYC out has no KYC table to write: its order notifications
          // replay, its KYC callbacks are counted (kycNotDeployed) and left unapplied.
          subjects: target.kycNotDeployed ? undefined : createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }),
          collections: createCollectionRepository({ tableName: requireEnv(target, 'COLLECTIONS_TABLE_NAME') }),
          clock: { now: () => range.until },
          log: cliLog,
          telemetry: noTelemetry,
        },
        range,
      );
      const { unrecognizedEvents, kycNotDeployed, ...counts } = result;
      const kycCounts = kycNotDeployed === undefined ? {} : { kycNotDeployed };
      printRangeResult(ctx, range, { ...counts, ...kycCounts }, ['scanned', 'applied', 'unchanged', 'unrecognized', 'skipped', ...(kycNotDeployed === undefined ? [] : ['kycNotDeployed' as const])], { unrecognizedEvents }, () => {
        printUnrecognized(result.unrecognized, unrecognizedEvents);
        if (kycNotDeployed !== undefined) printKycNotDeployed(target.label, kycNotDeployed);
      });
    });

  registerBackfillCommand(events);
  registerListCommand(events);
  registerShowCommand(events);
  registerQuarantineCommands(events);
}

/** `payrelay events backfill-references`: an upgrade's one-off step (docs/deploy.md). */
function registerBackfillCommand(events: Command): void {
  timeRangeCommand(events, 'backfill-references', '90d: every callback kept by default', 'payrelay events backfill-references --since 90d')
    .description(
      'add the callbacks stored before the by-reference listing existed to it, so the payout page and `events list --reference` show them (walks the time listing, one conditional write per callback; a rerun adds nothing)',
    )
    .action(async (opts: TimeRangeOptions, cmd: Command) => {
      const ctx = contextOf(cmd);
      const range = rangeOf(opts);
      const target = await ctx.target();
      const { backfillReferenceIndex } = await import('@shared/app/backfill-reference-index');
      const { createEventStore } = await import('@shared/adapters/event-store');
      const result = await backfillReferenceIndex(
        { events: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }), clock: { now: () => range.until }, log: cliLog },
        range,
      );
      printRangeResult(ctx, range, result, ['scanned', 'added', 'unchanged', 'noReference']);
    });
}

interface TimeRangeOptions {
  since: string;
  until?: string;
}

/** A subcommand over the callbacks received in a time range: `--since` (required) and `--until`. */
function timeRangeCommand(parent: Command, name: string, sinceExamples: string, ...examples: string[]): Command {
  return withExample(
    parent
      .command(name)
      .requiredOption('--since <time>', `start: ISO 8601 time or a duration back from now (${sinceExamples})`, timeArg)
      .option('--until <time>', 'end, exclusive (default: now)', timeArg),
    ...examples,
  );
}

/** The range a timeRangeCommand was given; `until` defaults to now. Refused before any stack is looked for when it is empty. */
function rangeOf(opts: TimeRangeOptions): { since: Date; until: Date } {
  const now = new Date();
  const range = { since: parseSince(opts.since, now), until: opts.until ? parseSince(opts.until, now) : now };
  refuseEmptyRange(range.since, range.until, true);
  return range;
}

/** One row: the range, then the counts (JSON: the same keys). */
function printRangeResult<T extends { [K in keyof T]: number }>(
  ctx: ReturnType<typeof contextOf>,
  range: { since: Date; until: Date },
  result: T,
  counts: Array<keyof T & string>,
  more: Record<string, unknown> = {},
  after: () => void = () => undefined,
): void {
  const bounds = { since: range.since.toISOString(), until: range.until.toISOString() };
  ctx.out.result({ ...bounds, ...result, ...more }, () => {
    printTable(
      ['since', 'until', ...counts.map((count) => count.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`))],
      [[bounds.since, bounds.until, ...counts.map((count) => result[count])]],
    );
    after();
  });
}

/**
 * A replay on a stack whose stage leaves KYC out: its KYC callbacks were not applied (there is no KYC
 * subject to apply them to), and how to apply them should KYC be turned on.
 */
function printKycNotDeployed(label: string, count: number): void {
  const what = count === 0 ? 'no KYC callback was in the range' : `${count} KYC callback(s) in the range were not applied (counted in kyc not deployed)`;
  printLine(`KYC is not deployed on ${label} (kyc.enabled: false): ${what}; order notifications were replayed. Once KYC is on, the same replay applies them.`);
}

/**
 * Names the unrecognized events of a replay (the first UNRECOGNIZED_NAMED, the rest counted) and why
 * each is not recognized, so a count alone does not leave the operator searching for them.
 */
export function printUnrecognized(total: number, named: readonly UnrecognizedEvent[]): void {
  if (total === 0) return;
  printLine(`Not recognized by the current code (${named.length < total ? `the first ${named.length} of ${total}` : `${total}`}); read one with the console's body viewer (/callbacks/view?id=<event id>):`);
  printTable(['event id', 'source', 'received', 'why not recognized'], named.map((e) => [e.eventId, e.source, e.receivedAt, e.reason]));
  if (named.length < total) printLine(`and ${total - named.length} more not named here (narrow --since/--until to see them)`);
}

/** `payrelay events list`: stored callbacks newest first, a page at a time (the console's Callbacks page reads the same). */
function registerListCommand(events: Command): void {
  withExample(
    events
      .command('list')
      .option('--day <YYYY-MM-DD>', 'callbacks received on this UTC day (default: today, or every day kept with --reference)', calendarDay)
      .option('--reference <reference>', 'only callbacks naming this withdrawal_reference or user_reference')
      .addOption(new Option('--source <source>', 'only callbacks from this source').choices([...CALLBACK_SOURCES]))
      .option('--limit <n>', 'show at most n, newest first (at most 1000)', listLimit, 50)
      .option('--cursor <cursor>', 'the next page: the cursor printed under the previous page', nonEmptyText),
    'payrelay events list',
    'payrelay events list --reference WD-2024-0001',
    'payrelay --json events list --day 2026-11-20 --source kyc --limit 200',
  )
    .description('list stored callbacks newest first, a page at a time: of one day, or naming one reference (reads an index, never the whole table, never the bodies)')
    .action(async (opts: { day?: string; reference?: string; source?: CallbackSource; limit: number; cursor?: string }, cmd: Command) => {
      // An empty reference names no callback: say so instead of "No callbacks match --reference ''".
      if (opts.reference?.trim() === '') throw new CliError('--reference is empty: give the withdrawal_reference or user_reference the callbacks name', EXIT.invalidInput);
      const ctx = contextOf(cmd);
      const target = await ctx.target();
      const { createEventStore } = await import('@shared/adapters/event-store');
      const store = createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') });
      const common = { limit: opts.limit, ...(opts.source ? { source: opts.source } : {}), ...(opts.cursor ? { cursor: opts.cursor } : {}) };
      const day = opts.day ?? (opts.reference === undefined ? receivedDayOf(new Date()) : undefined);
      const page = await store.listCallbacks(opts.reference === undefined ? { ...common, day: day as string } : { ...common, reference: opts.reference, ...(day ? { day } : {}) });
      const shown = page.events;
      ctx.out.result({ events: shown, cursor: page.cursor ?? null }, () => {
        const filter = optionsText([['--day', day], ['--reference', opts.reference], ['--source', opts.source]]);
        const today = opts.day === undefined && day !== undefined ? ' (today, UTC)' : '';
        printListing(
          ['received at', 'source', 'names', 'recognized', 'event id'],
          shown.map((e) => [e.receivedAt, e.source, e.withdrawalReference ?? e.userReference ?? '', e.recognized ? 'yes' : `no: ${e.unrecognizedReason ?? ''}`, e.eventId]),
          opts.cursor === undefined ? `No callbacks match ${filter}${today}.` : `No more callbacks match ${filter}${today} after this --cursor.`,
        );
        if (shown.length === 0) return;
        const what = `${shown.length} callback(s)${opts.reference === undefined ? '' : ` naming ${opts.reference}`}${day ? ` on ${day}` : ''}`;
        printLine(page.cursor === undefined ? what : `${what} on this page; next page: --cursor ${page.cursor}`);
      });
    });
}

/**
 * Longest event id looked up: a dedupe key is `<source>#<64 hex digits>` (84 characters at most), and
 * DynamoDB refuses a key over 2048 bytes with an error that would read as a failure; anything longer
 * than this names no stored callback.
 */
const MAX_EVENT_ID_LENGTH = 256;

/** What `events show` prints of a stored callback: every field, the body masked. */
export type ShownEvent = Omit<StoredEvent, 'body'> & { body: string };

/**
 * A stored callback as `events show` prints it: its body through the console's masking viewer
 * (maskAccountsInJsonText: account, card and phone numbers masked at any depth), never as stored,
 * since a provider body carries the beneficiary's account number.
 */
export function shownEvent(event: StoredEvent): ShownEvent {
  return { ...event, body: maskAccountsInJsonText(event.body) };
}

/**
 * The line under an unrecognized callback: the reference it names is only what its body says
 * (nothing was applied), and how it gets applied once payrelay learns its shape. The replay range
 * holds exactly its receipt time, so only this callback is read again.
 */
export function unrecognizedHint(event: Pick<StoredEvent, 'receivedAt'>): string {
  const until = new Date(Date.parse(event.receivedAt) + 1).toISOString();
  return (
    'Not applied: payrelay did not recognize it (the reference shown is what its body names, nothing vouches for it). ' +
    `Once an upgrade recognizes this shape, apply it with: payrelay events replay --since ${event.receivedAt} --until ${until}`
  );
}

/** `payrelay events show`: one stored callback, its body masked (the console's callback page reads the same). */
function registerShowCommand(events: Command): void {
  withExample(
    events.command('show').argument('<event-id>', 'the event id `events list` prints (kyc#… or payout-notification#…)'),
    'payrelay events show kyc#3f9a0c21d4e5b6a7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5',
    'payrelay --json events show kyc#3f9a0c21d4e5b6a7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5',
  )
    .description(
      'show one stored callback: when and how it came, whether it was recognized (and why not) and applied, the references it names, ' +
        'and its body as received with account, card and phone numbers masked (one GetItem)',
    )
    .action(async (eventId: string, _opts: unknown, cmd: Command) => {
      // Refused before any stack is looked for: an empty id names no callback.
      if (eventId.trim() === '') throw new CliError('event id is empty: give the id `payrelay events list` prints', EXIT.invalidInput);
      const ctx = contextOf(cmd);
      const target = await ctx.target();
      const { createEventStore } = await import('@shared/adapters/event-store');
      const stored = eventId.length > MAX_EVENT_ID_LENGTH ? undefined : await createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }).get(eventId);
      if (stored === undefined) {
        throw new CliError(
          `no stored callback ${eventId.length > 100 ? `${eventId.slice(0, 100)}…` : eventId} (ids look like kyc#<64 hex digits>, as payrelay events list prints them; a callback is kept EVENT_RETENTION_DAYS days, 90 by default)`,
          EXIT.notFound,
        );
      }
      const shown = shownEvent(stored);
      ctx.out.result(shown, () => {
        printRecord({
          'event id': shown.eventId,
          source: shown.source,
          'received at': shown.receivedAt,
          via: shown.via ?? 'delivered',
          'from address': shown.sourceIp,
          recognized: shown.recognized ? 'yes' : `no: ${shown.unrecognizedReason ?? ''}`,
          'applied at': shown.appliedAt ?? (shown.recognized ? 'not yet (the applier applies it shortly)' : 'never (unrecognized)'),
          'app id': shown.appId,
          user_reference: shown.userReference,
          withdrawal_reference: shown.withdrawalReference,
        });
        if (!shown.recognized) printLine(unrecognizedHint(shown));
        printBody('body as received (account, card and phone numbers masked)', shown.body);
      });
    });
}

/** `payrelay events quarantine list|show`: order notifications whose signature did not match. */
function registerQuarantineCommands(events: Command): void {
  const quarantine = withExample(
    events
      .command('quarantine')
      .description('order notifications with the partner key but a signature no configured scheme reproduces: kept, never applied'),
    'payrelay events quarantine list --since 2d',
  );
  const store = async (cmd: Command) => {
    const target = await contextOf(cmd).target();
    const { createQuarantineStore } = await import('@shared/adapters/quarantine-store');
    return createQuarantineStore({ tableName: requireEnv(target, 'QUARANTINE_TABLE_NAME') });
  };

  withExample(
    quarantine
      .command('list')
      .option('--since <time>', 'oldest: ISO 8601 time or a duration back from now (30m, 6h, 2d)', timeArg, '7d')
      .option('--limit <n>', 'most to list, newest first', positiveInt, 50),
    'payrelay events quarantine list',
    'payrelay --json events quarantine list --since 2026-11-20',
  )
    .description('list quarantined notifications, newest first (id, time, payout reference, source address, size)')
    .action(async (opts: { since: string; limit: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const now = new Date();
      const since = parseSince(opts.since, now);
      const found = await (await store(cmd)).list(since, now, opts.limit);
      const rows = found.map(({ body, ...rest }) => ({ ...rest, bytes: Buffer.byteLength(body, 'utf8') }));
      ctx.out.result(rows, () => {
        printListing(
          ['id', 'received at', 'withdrawal reference', 'source', 'bytes'],
          rows.map((r) => [r.id, r.receivedAt, r.withdrawalReference ?? '', r.sourceIp ?? '', r.bytes]),
          `Nothing quarantined since ${since.toISOString()}.`,
        );
      });
    });

  withExample(quarantine.command('show').argument('<id>', 'a quarantine id from `events quarantine list`'), 'payrelay events quarantine show 2026-11-23.3f9a0c21d4e5b6a7')
    .description('print one quarantined notification with its body as received, account, card and phone numbers masked')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const kept = await (await store(cmd)).get(id);
      if (kept === undefined) throw new CliError(`no quarantined notification ${id} (ids look like 2026-11-23.3f9a0c21d4e5b6a7; see events quarantine list)`, EXIT.notFound);
      const found = { ...kept, body: maskAccountsInJsonText(kept.body) };
      ctx.out.result(found, () => {
        printTable(['id', 'received at', 'withdrawal reference', 'source'], [[found.id, found.receivedAt, found.withdrawalReference ?? '', found.sourceIp ?? '']]);
        printBody('body as received (account, card and phone numbers masked)', found.body);
      });
    });
}
