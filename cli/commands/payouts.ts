import type { Command} from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { PAYOUT_STATES, type Payout, type PayoutState } from '@shared/domain/payout';
import { contextOf, positiveInt, withExample, type CommandContext } from '../context';
import { registerEnqueueCommand } from './payouts-enqueue';
import { CliError, printRecord, printTable } from '../output';
import { requireEnv } from '../target';

/** `--limit` of `payouts list`: 1 to 1000 (one page). */
function listLimit(value: string): number {
  const n = positiveInt(value);
  if (n > 1000) throw new InvalidArgumentError('at most 1000 per page; use --cursor for the next page');
  return n;
}

/** The shared adapters, imported only after the target env is applied (they read it at load). */
async function adapters(ctx: CommandContext) {
  const target = await ctx.target();
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const { documentClient, sqsClient } = await import('@shared/adapters/aws-clients');
  return { target, repository: createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME')), documentClient, sqsClient };
}

/** A payout as a flat row for tables and JSON (masked account only; nothing secret is stored). */
export function payoutSummary(payout: Payout): Record<string, unknown> {
  const r = payout.record;
  return {
    withdrawal_reference: r.identity.withdrawal_reference,
    platform_merchant_id: r.identity.platform_merchant_id,
    currency: r.identity.currency,
    amount: r.amount,
    state: r.state,
    account: `${r.accountCode} ${r.accountMasked}`,
    verified_name: r.verifiedName,
    provider_status: r.providerStatus,
    reason: r.reason,
    submit_attempts: r.submitAttempts,
    next_check_at: r.nextCheckAt,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** Every stored payout with this withdrawal_reference (one per merchant and currency). */
async function findByReference(ctx: CommandContext, reference: string): Promise<Payout[]> {
  const { repository } = await adapters(ctx);
  return repository.findByReference(reference);
}

function registerStatusAndList(payouts: Command): void {
  withExample(
    payouts
      .command('status')
      .argument('<withdrawal_reference>', 'the partner reference of the payout')
      .option('--currency <code>', 'only the payout in this currency')
      .option('--merchant <platform_merchant_id>', 'only the payout of this merchant'),
    'payrelay payouts status WD-2024-0001',
  )
    .description('show the state of a payout and its full history of transitions')
    .action(async (reference: string, opts: { currency?: string; merchant?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const payouts = (await findByReference(ctx, reference)).filter(
        (p) =>
          (!opts.currency || p.record.identity.currency === opts.currency) &&
          (!opts.merchant || p.record.identity.platform_merchant_id === opts.merchant),
      );
      if (payouts.length === 0) throw new CliError(`no payout with withdrawal_reference ${reference}`);
      const data = payouts.map((p) => ({ ...payoutSummary(p), history: p.record.history }));
      ctx.out.result(data, () => {
        for (const p of payouts) {
          printRecord(payoutSummary(p));
          printTable(['at', 'from', 'to', 'reason'], p.record.history.map((h) => [h.at, h.from ?? '(new)', h.to, h.reason]));
        }
      });
    });

  withExample(
    payouts
      .command('list')
      .addOption(new Option('--state <state>', 'payouts in this state').choices([...PAYOUT_STATES]).makeOptionMandatory())
      .option('--limit <n>', 'show at most n, newest change first (at most 1000)', listLimit, 100)
      .option('--merchant <platform_merchant_id>', 'only payouts of this merchant')
      .option('--since <time>', 'only payouts last changed at or after this time: ISO 8601 or a duration back from now (30m, 6h, 2d)')
      .option('--until <time>', 'only payouts last changed at or before this time (same forms as --since)')
      .option('--cursor <cursor>', 'the next page: the cursor printed under the previous page'),
    'payrelay payouts list --state NEEDS_REVIEW',
  )
    .description('list payouts in one state, newest change first, a page at a time (reads an index, never the whole table)')
    .action(async (opts: { state: PayoutState; limit: number; merchant?: string; since?: string; until?: string; cursor?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { repository } = await adapters(ctx);
      const { InvalidListCursorError } = await import('@shared/domain/errors');
      const { parseSince } = await import('./events');
      let page;
      try {
        page = await repository.listByState({
          state: opts.state,
          limit: opts.limit,
          merchant: opts.merchant,
          updatedFrom: opts.since === undefined ? undefined : parseSince(opts.since),
          updatedTo: opts.until === undefined ? undefined : parseSince(opts.until),
          cursor: opts.cursor,
        });
      } catch (error) {
        if (error instanceof InvalidListCursorError) throw new CliError(`--cursor: ${error.message}`);
        throw error;
      }
      const shown = page.payouts;
      ctx.out.result(
        { payouts: shown.map((p) => payoutSummary(p)), cursor: page.cursor ?? null },
        () => {
          printTable(
            ['withdrawal_reference', 'currency', 'amount', 'state', 'updated', 'reason'],
            shown.map((p) => [p.record.identity.withdrawal_reference, p.record.identity.currency, p.record.amount, p.state, p.record.updatedAt, p.record.reason]),
          );
          console.log(
            page.cursor === undefined
              ? `${shown.length} payout(s) in ${opts.state}`
              : `${shown.length} payout(s) in ${opts.state} on this page; next page: --cursor ${page.cursor}`,
          );
        },
      );
    });
}

function registerRedrive(payouts: Command): void {
  withExample(
    payouts.command('redrive').option('--max <n>', 'move at most n messages', positiveInt),
    'payrelay payouts redrive',
  )
    .description(
      'move messages from the dead-letter queue back to the payouts queue (after fixing their cause) and report the count. ' +
        'Safe for money: the worker never pays a payout twice, whatever the message count.',
    )
    .action(async (opts: { max?: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { target, sqsClient } = await adapters(ctx);
      const { redrive } = await import('../redrive');
      const result = await redrive(sqsClient, requireEnv(target, 'PAYOUTS_DLQ_URL'), requireEnv(target, 'PAYOUTS_QUEUE_URL'), opts.max);
      ctx.out.result(result, () => printTable(['moved', 'failed'], [[result.moved, result.failed]]));
      if (result.failed > 0) throw new CliError(`${result.failed} message(s) could not be moved; they stay in the DLQ`);
    });
}

/** `payrelay payouts enqueue|status|list|redrive`. */
export function registerPayoutsCommands(program: Command): void {
  const payouts = withExample(
    program.command('payouts').description('bulk payouts from a file, status, listing and DLQ redrive'),
    'payrelay payouts enqueue --file payouts.csv',
    'payrelay payouts list --state NEEDS_REVIEW',
  );
  registerEnqueueCommand(payouts);
  registerStatusAndList(payouts);
  registerRedrive(payouts);
}
