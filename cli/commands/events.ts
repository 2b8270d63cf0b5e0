import type { Command } from 'commander';
import { contextOf, parseSince, withExample } from '../context';
import { CliError, EXIT, printTable } from '../output';
import { requireEnv } from '../target';
import { cliLog, noTelemetry } from './kyc';

/** `payrelay events replay --since`. */
export function registerEventsCommands(program: Command): void {
  const events = withExample(program.command('events').description('stored callbacks'), 'payrelay events replay --since 6h');
  withExample(
    events
      .command('replay')
      .requiredOption('--since <time>', 'start: ISO 8601 time or a duration back from now (30m, 6h, 2d)')
      .option('--until <time>', 'end, exclusive (default: now)'),
    'payrelay events replay --since 6h',
    'payrelay events replay --since 2026-11-20T00:00:00Z --until 2026-11-21T00:00:00Z',
  )
    .description('re-apply the stored callbacks of a time range: KYC callbacks to the KYC subjects, order notifications to the collections they name (idempotent; notifications about payouts are left to the reconciler)')
    .action(async (opts: { since: string; until?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const now = new Date();
      const since = parseSince(opts.since, now);
      const until = opts.until ? parseSince(opts.until, now) : undefined;
      const target = await ctx.target();
      const { replayEvents } = await import('@shared/app/replay-events');
      const { createEventStore } = await import('@shared/adapters/event-store');
      const { createKycRepository } = await import('@shared/adapters/kyc-repository');
      const { createCollectionRepository } = await import('@shared/adapters/collection-repository');
      const result = await replayEvents(
        {
          events: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }),
          subjects: createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }),
          collections: createCollectionRepository({ tableName: requireEnv(target, 'COLLECTIONS_TABLE_NAME') }),
          clock: { now: () => now },
          log: cliLog,
          telemetry: noTelemetry,
        },
        { since, ...(until ? { until } : {}) },
      );
      ctx.out.result({ since: since.toISOString(), until: (until ?? now).toISOString(), ...result }, () =>
        printTable(
          ['since', 'until', 'scanned', 'applied', 'unchanged', 'unrecognized', 'skipped'],
          [[since.toISOString(), (until ?? now).toISOString(), result.scanned, result.applied, result.unchanged, result.unrecognized, result.skipped]],
        ),
      );
    });

  registerQuarantineCommands(events);
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
      .option('--since <time>', 'oldest: ISO 8601 time or a duration back from now (30m, 6h, 2d)', '7d')
      .option('--limit <n>', 'most to list, newest first', '50'),
    'payrelay events quarantine list',
    'payrelay --json events quarantine list --since 2026-11-20',
  )
    .description('list quarantined notifications, newest first (id, time, payout reference, source address, size)')
    .action(async (opts: { since: string; limit: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const now = new Date();
      const since = parseSince(opts.since, now);
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new CliError(`--limit must be a positive whole number; got "${opts.limit}"`, EXIT.invalidInput);
      const found = await (await store(cmd)).list(since, now, limit);
      const rows = found.map(({ body, ...rest }) => ({ ...rest, bytes: Buffer.byteLength(body, 'utf8') }));
      ctx.out.result(rows, () => {
        if (rows.length === 0) console.log(`Nothing quarantined since ${since.toISOString()}.`);
        else printTable(['id', 'received at', 'withdrawal reference', 'source', 'bytes'], rows.map((r) => [r.id, r.receivedAt, r.withdrawalReference ?? '', r.sourceIp ?? '', r.bytes]));
      });
    });

  withExample(quarantine.command('show').argument('<id>', 'a quarantine id from `events quarantine list`'), 'payrelay events quarantine show 2026-11-23.3f9a0c21d4e5b6a7')
    .description('print one quarantined notification with its body exactly as received')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const found = await (await store(cmd)).get(id);
      if (found === undefined) throw new CliError(`no quarantined notification ${id} (ids look like 2026-11-23.3f9a0c21d4e5b6a7; see events quarantine list)`, EXIT.notFound);
      ctx.out.result(found, () => {
        printTable(['id', 'received at', 'withdrawal reference', 'source'], [[found.id, found.receivedAt, found.withdrawalReference ?? '', found.sourceIp ?? '']]);
        console.log(found.body);
      });
    });
}
