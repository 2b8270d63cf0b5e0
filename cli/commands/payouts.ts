import type { Command} from 'commander';
import { Option } from 'commander';
import { PAYOUT_STATES, type Payout, type PayoutState } from '@shared/domain/payout';
import { MAX_WITHDRAWAL_REFERENCE_LENGTH } from '@shared/messages/payout-request';
import { contextOf, listLimit, lowerCaseChoice, nonEmptyText, parseSince, refuseEmptyRange, timeArg, upperCaseChoice, withExample, type CommandContext } from '../context';
import { registerEnqueueCommand } from './payouts-enqueue';
import { CliError, EXIT, optionsText, printListing, printRecord, printTable, shellWord, printLine, printErrorLine } from '../output';
import { registerRedriveCommand } from './dlq';
import { identityOf, matchingAll, operatorActor, operatorDeps, operatorName, pickOne, reasonWithActor, targetFingerprints, whoText, type IdentityOptions } from '../operator';
import { requireEnv } from '../target';
import { noticeStatusText } from '@shared/app/payout-notices';

/** The shared adapters, imported only after the target env is applied (they read it at load). */
async function adapters(ctx: CommandContext) {
  const target = await ctx.target();
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  return { target, repository: createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME')) };
}

/** A payout as a flat row for tables and JSON (masked account only; nothing secret is stored). */
export function payoutSummary(payout: Payout): Record<string, unknown> {
  const r = payout.record;
  return {
    withdrawal_reference: r.identity.withdrawal_reference,
    platform_merchant_id: r.identity.platform_merchant_id,
    currency: r.identity.currency,
    // An invalid request is recorded without an amount or account (not trusted): left out, so the
    // table shows '-' for both, and --json leaves both out as it does any field without a value.
    amount: r.amount === '' ? undefined : r.amount,
    state: r.state,
    account: [r.accountCode, r.accountMasked].filter((part) => part !== '').join(' ') || undefined,
    verified_name: r.verifiedName,
    // The KYC subject the payout was gated on: how a changed KYC decision is traced to its payouts.
    user_reference: r.userReference,
    provider_status: r.providerStatus,
    reason: r.reason,
    // Intents written (released and withdrawn ones included): at most that many Payout calls, not calls made.
    payout_intents: r.submitAttempts,
    next_check_at: r.nextCheckAt,
    retry_of: r.retryOf,
    retried_as: r.retriedAs,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** Every stored payout with this withdrawal_reference (one per merchant and currency). */
async function findByReference(ctx: CommandContext, reference: string): Promise<Payout[]> {
  // Refused before any stack is looked for: an empty reference names no payout.
  if (reference.trim() === '') throw new CliError('withdrawal_reference is empty: give the reference the payout was requested with', EXIT.invalidInput);
  if (reference.length > MAX_WITHDRAWAL_REFERENCE_LENGTH) {
    throw new CliError(`withdrawal_reference is longer than ${MAX_WITHDRAWAL_REFERENCE_LENGTH} characters: no payout has such a reference`, EXIT.invalidInput);
  }
  const { repository } = await adapters(ctx);
  return repository.findByReference(reference);
}

function registerStatusAndList(payouts: Command): void {
  withExample(
    payouts
      .command('status')
      .argument('<withdrawal_reference>', 'the partner reference of the payout')
      .option('--currency <code>', 'only the payout in this currency', nonEmptyText)
      .option('--merchant <platform_merchant_id>', 'only the payout of this merchant', nonEmptyText),
    'payrelay payouts status WD-2024-0001',
  )
    .description('show the state of a payout and its full history of transitions')
    .action(async (reference: string, opts: { currency?: string; merchant?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const payouts = matchingAll(reference, await findByReference(ctx, reference), opts);
      const target = await ctx.target();
      const { createEventStore } = await import('@shared/adapters/event-store');
      const { noticesNaming } = await import('@shared/app/payout-notices');
      const events = createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') });
      // The provider's signed notifications naming each payout: evidence beside GetPayout's answer (rule 1).
      const notified = await Promise.all(payouts.map((p) => noticesNaming(events, p.record.identity, p.record.createdAt)));
      const data = payouts.map((p, n) => ({ ...payoutSummary(p), history: p.record.history, provider_notifications: notified[n]?.notices ?? [] }));
      ctx.out.result(data, () => {
        payouts.forEach((p, n) => {
          printRecord(payoutSummary(p));
          printTable(['at', 'from', 'to', 'reason'], p.record.history.map((h) => [h.at, h.from ?? '(new)', h.to, reasonWithActor(h)]));
          const found = notified[n];
          if (found === undefined || found.notices.length === 0) return;
          printLine("The provider's signed order notifications naming it (the provider knows this reference, whatever GetPayout says):");
          printTable(['received at', 'event id', 'status words'], found.notices.map((x) => [x.receivedAt, x.eventId, noticeStatusText(x)]));
          if (found.truncated) printLine('(more notifications name this reference: payrelay events list --reference ' + shellWord(reference) + ')');
        });
      });
    });

  withExample(
    payouts
      .command('list')
      .addOption(upperCaseChoice(new Option('--state <state>', 'payouts in this state (any case)'), PAYOUT_STATES).makeOptionMandatory())
      .option('--limit <n>', 'show at most n, newest change first (at most 1000)', listLimit, 100)
      .option('--merchant <platform_merchant_id>', 'only payouts of this merchant', nonEmptyText)
      .option(
        '--user-reference <user_reference>',
        'only payouts requested with this user_reference (the KYC user). A filter, not an index: it reads the same index pages as the listing without it ' +
          '(and each listed payout\'s user_reference), so a page may hold fewer than --limit while a --cursor follows',
        nonEmptyText,
      )
      .option('--since <time>', 'only payouts last changed at or after this time: ISO 8601 or a duration back from now (30m, 6h, 2d)', timeArg)
      .option('--until <time>', 'only payouts last changed at or before this time (same forms as --since)', timeArg)
      .option('--cursor <cursor>', 'the next page: the cursor printed under the previous page', nonEmptyText),
    'payrelay payouts list --state NEEDS_REVIEW',
    'payrelay payouts list --state SUCCEEDED --user-reference user-42 --since 2026-11-20T00:00:00Z',
  )
    .description('list payouts in one state, newest change first, a page at a time (reads an index, never the whole table)')
    .action(async (opts: { state: PayoutState; limit: number; merchant?: string; userReference?: string; since?: string; until?: string; cursor?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      if (opts.userReference !== undefined && opts.userReference.length > MAX_WITHDRAWAL_REFERENCE_LENGTH) {
        throw new CliError(`--user-reference is longer than ${MAX_WITHDRAWAL_REFERENCE_LENGTH} characters: no payout has such a user_reference`, EXIT.invalidInput);
      }
      // Wrong times are refused before any stack is looked for.
      const updatedFrom = opts.since === undefined ? undefined : parseSince(opts.since);
      const updatedTo = opts.until === undefined ? undefined : parseSince(opts.until);
      refuseEmptyRange(updatedFrom, updatedTo, false);
      const { repository } = await adapters(ctx);
      const page = await repository.listByState({
        state: opts.state,
        limit: opts.limit,
        merchant: opts.merchant,
        userReference: opts.userReference,
        updatedFrom,
        updatedTo,
        cursor: opts.cursor,
      });
      const shown = page.payouts;
      ctx.out.result(
        { payouts: shown.map((p) => payoutSummary(p)), cursor: page.cursor ?? null },
        () => {
          const filter = optionsText([['--state', opts.state], ['--merchant', opts.merchant], ['--user-reference', opts.userReference], ['--since', opts.since], ['--until', opts.until]]);
          if (shown.length === 0 && page.cursor !== undefined) {
            // A filter read pages that held none of them; more may follow.
            printLine(`No payouts match ${filter} in the payouts read for this page; more may: next page: --cursor ${page.cursor}`);
            return;
          }
          printListing(
            ['withdrawal_reference', 'currency', 'amount', 'state', 'updated', 'reason'],
            shown.map((p) => [p.record.identity.withdrawal_reference, p.record.identity.currency, p.record.amount, p.state, p.record.updatedAt, p.record.reason]),
            opts.cursor === undefined ? `No payouts match ${filter}.` : `No more payouts match ${filter} after this --cursor.`,
          );
          if (shown.length === 0) return;
          const what = `${shown.length} payout(s) in ${opts.state}${opts.userReference === undefined ? '' : ` of user ${opts.userReference}`}`;
          printLine(page.cursor === undefined ? what : `${what} on this page; next page: --cursor ${page.cursor}`);
        },
      );
    });
}

const identityOptions = (cmd: Command): Command =>
  cmd
    .option('--currency <code>', 'the payout in this currency (when the reference is used in several)', nonEmptyText)
    .option('--merchant <platform_merchant_id>', 'the payout of this merchant (when the reference is used by several)', nonEmptyText);

function registerResolveAndRetry(payouts: Command): void {
  withExample(
    identityOptions(
      payouts
        .command('resolve')
        .argument('<withdrawal_reference>', 'the NEEDS_REVIEW payout')
        .addOption(lowerCaseChoice(new Option('--as <outcome>', 'what happened to the money'), ['succeeded', 'failed']).makeOptionMandatory())
        .requiredOption('--evidence <text>', 'what shows it (bank statement line, provider ticket); recorded in history')
        .option('--by <name>', 'who resolves (default: your AWS identity for --stack, else <OS user>@<host>); the identity running the command is recorded beside a name given', nonEmptyText)
        .option(
          '--force',
          "resolve against the provider's answer (or without one): only with evidence that outweighs it, for --as failed the provider's written confirmation that it never executed the payout; recorded in history as an override",
        ),
    ),
    'payrelay payouts resolve WD-2024-0001 --as failed --evidence "provider ticket 4711: cancelled"',
    'payrelay payouts resolve WD-2024-0001 --as succeeded --evidence "bank statement 2024-05-02 line 14" --by ama',
  )
    .summary('settle a NEEDS_REVIEW payout as SUCCEEDED or FAILED, with evidence')
    .description(
      'settle a NEEDS_REVIEW payout as SUCCEEDED or FAILED. Asks GetPayout first and refuses an outcome the provider ' +
        'contradicts (delivered vs failed, failed while the provider still holds it as pending, or failed on "not found" when a signed notification names it, the provider acknowledged it, or a Payout call may have reached it), and says what evidence would settle it. ' +
        '--force records the outcome against the provider\'s answer: a FAILED payout can be retried, so forcing FAILED on a payout the provider executed risks paying twice. The history entry records who (and the identity running the command, when it differs from --by), when, the evidence and the provider answer.',
    )
    .action(
      async (
        reference: string,
        opts: IdentityOptions & { as: 'succeeded' | 'failed'; evidence: string; by?: string; force?: boolean },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd);
        const payout = pickOne(reference, await findByReference(ctx, reference), opts);
        const { target, deps, close } = await operatorDeps(ctx);
        try {
          const { resolvePayout } = await import('@shared/app/resolve-payout');
          const by = await operatorName(target, opts.by);
          const actor = await operatorActor(target);
          const result = await resolvePayout(deps, { identity: identityOf(payout), as: opts.as, evidence: opts.evidence, by, actor, force: opts.force });
          const entry = result.payout.record.history.at(-1);
          if (result.forced) {
            printErrorLine(
              `warning: ${reference} was resolved as ${result.payout.state} against the provider's answer (${entry?.providerAnswer ?? ''}); the history records the override and your evidence. ` +
                'If the provider did execute it, a FAILED here is wrong and a retry would pay twice.',
            );
          }
          ctx.out.result({ ...payoutSummary(result.payout), resolution: entry, forced: result.forced }, () => {
            printLine(`${reference} is now ${result.payout.state}.`);
            printRecord({ by: entry?.by === undefined ? undefined : whoText(entry.by, entry.actor), at: entry?.at, evidence: entry?.evidence, provider_answer: entry?.providerAnswer });
          });
        } finally {
          close();
        }
      },
    );

  withExample(
    identityOptions(
      payouts
        .command('retry')
        .argument('<withdrawal_reference>', 'the FAILED payout')
        .requiredOption('--new-reference <withdrawal_reference>', 'the reference of the new payout (same merchant and currency)', nonEmptyText)
        .option('--account-number <digits>', "the beneficiary's full number, when the provider's record does not give it (must match the stored mask)")
        .option('--by <name>', 'who retries (default: your AWS identity for --stack, else <OS user>@<host>); the identity running the command is recorded beside a name given', nonEmptyText)
        .option(
          '--force',
          "retry although the provider's \"not found\" does not show the first was never executed (CAN PAY TWICE): only with the provider's written confirmation that it never executed the first, given as --evidence; recorded in both payouts' histories",
        )
        .option('--evidence <text>', "with --force: the provider's written confirmation that the first payout was never executed (e.g. a support ticket); recorded in history", nonEmptyText),
    ),
    'payrelay payouts retry WD-2024-0001 --new-reference WD-2024-0001-R1',
  )
    .summary('pay a FAILED payout again under a new reference, linked both ways')
    .description(
      'pay a FAILED payout again as a new payout to the same beneficiary for the same amount, linked both ways. GetPayout is asked first. ' +
        'Refused while the provider holds the first payout in any state but failed, or cannot be asked. On "not found" it is also refused when that answer does not show ' +
        'the first was never executed: a stored signed notification names it, the provider acknowledged it before, or its FAILED was forced (resolve --force) while a Payout call may have reached the provider. ' +
        '--force --evidence overrides only those "not found" refusals, for an operator holding the provider\'s written confirmation that the first was never executed: if it was executed after all, the beneficiary is paid twice. ' +
        'A SUCCEEDED or REVERSED payout is never retried: send a new payout request under a new withdrawal_reference.',
    )
    .action(async (reference: string, opts: IdentityOptions & { newReference: string; accountNumber?: string; by?: string; force?: boolean; evidence?: string }, cmd: Command) => {
      if (opts.force === true && opts.evidence === undefined) {
        throw new CliError(`--force needs --evidence: the provider's written confirmation that it never executed ${reference}`, EXIT.invalidInput);
      }
      const ctx = contextOf(cmd);
      const payout = pickOne(reference, await findByReference(ctx, reference), opts);
      const { target, deps, close } = await operatorDeps(ctx);
      try {
        const { retryPayout } = await import('@shared/app/retry-payout');
        const { createPayoutQueue } = await import('@shared/adapters/payout-queue');
        const by = await operatorName(target, opts.by);
        const actor = await operatorActor(target);
        const queue = createPayoutQueue(requireEnv(target, 'PAYOUTS_QUEUE_URL'));
        const result = await retryPayout(
          { ...deps, queue, fingerprints: await targetFingerprints(target) },
          { identity: identityOf(payout), newReference: opts.newReference, by, actor, accountNumber: opts.accountNumber, force: opts.force, evidence: opts.evidence },
        );
        if (result.forced) {
          printErrorLine(
            `warning: ${opts.newReference} was created against the provider's answer for ${reference} (--force), recorded in both payouts' histories: if the provider executed ${reference} after all, the beneficiary is paid twice.`,
          );
        }
        ctx.out.result({ original: payoutSummary(result.original), retry: payoutSummary(result.retry), sent: result.sent, forced: result.forced }, () => {
          printLine(
            result.sent
              ? `${opts.newReference} created (retry of ${reference}) and sent to the payouts queue.`
              : `${opts.newReference} already exists as the retry of ${reference} (${result.retry.state}); nothing sent again.`,
          );
          printLine(`Follow it with: payrelay payouts status ${shellWord(opts.newReference)}`);
        });
      } finally {
        close();
      }
    });
}

/** `payrelay payouts enqueue|status|list|resolve|retry|redrive`. */
export function registerPayoutsCommands(program: Command): void {
  const payouts = withExample(
    program.command('payouts').description('bulk payouts from a file, status, listing, resolving NEEDS_REVIEW, retrying FAILED, and DLQ redrive'),
    'payrelay payouts enqueue --file payouts.csv',
    'payrelay payouts list --state NEEDS_REVIEW',
  );
  registerEnqueueCommand(payouts);
  registerStatusAndList(payouts);
  registerResolveAndRetry(payouts);
  registerRedriveCommand(payouts, 'payrelay payouts redrive --max 100 --wait 60');
}
