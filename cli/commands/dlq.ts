import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { DeadLetterView, HeldDeadLetter, RedriveReport } from '@shared/app/dead-letters';
import type { DeadLetterQueue } from '@shared/ports/dead-letters';
import type { PayoutItemStore } from '@shared/ports/payouts';
import { NOTHING_PAID } from '@shared/domain/payout';
import { contextOf, nonEmptyText, nonNegativeInt, positiveInt, withExample, type CommandContext } from '../context';
import { jsonLinesLog, quietLog } from '../log';
import { operatorActor, operatorName } from '../operator';
import { CliError, printBody, printListing, printRecord, printTable, printLine, shellWord } from '../output';
import { requireEnv } from '../target';

/** The target's DLQ and payouts queue (adapters imported after the target env is applied). */
async function deadLetterQueue(
  ctx: CommandContext,
): Promise<{ dlq: DeadLetterQueue; payouts: () => Promise<Pick<PayoutItemStore, 'get'>>; by: (given?: string) => Promise<string>; actor: () => Promise<string> }> {
  const target = await ctx.target();
  const { createDeadLetterQueue } = await import('@shared/adapters/dead-letter');
  return {
    dlq: createDeadLetterQueue(requireEnv(target, 'PAYOUTS_DLQ_URL'), requireEnv(target, 'PAYOUTS_QUEUE_URL')),
    payouts: async () => {
      const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
      return createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME'));
    },
    by: (given) => operatorName(target, given),
    actor: () => operatorActor(target),
  };
}

/**
 * The CLI's record of operator actions on the DLQ: one JSON line on stderr (stdout stays the command's
 * output), so a shell session, a CI log or `2>> dlq-audit.log` keeps it.
 */
const auditLog = jsonLinesLog();

const identityText = (identity?: { platform_merchant_id: string; currency: string; withdrawal_reference: string }): string | undefined =>
  identity ? `${identity.withdrawal_reference} (${identity.platform_merchant_id}, ${identity.currency})` : undefined;

/**
 * The label of a DLQ message's receive count. SQS cannot show a message without receiving it, so
 * payrelay's own reads (`dlq list`, `dlq show`, the console) count too: the label says so, lest it be
 * read as the worker's attempts (those are in the message's reason, "gave up after N receives").
 */
export const RECEIVES_LABEL = 'receives (our reads too)';

/** Under `dlq list`: what the receive count is, and where the worker's attempts are. */
export const RECEIVES_NOTE =
  "receives counts every receive of the message in the DLQ, payrelay's own reads (dlq list, dlq show, the console) included: it is not the worker's attempts, which its reason gives (\"gave up after N receives\")";

/** `dlq show` for a person: the message's fields and attributes as a table, then its body (masked) under a heading. */
export function printDeadLetter(shown: DeadLetterView & { body: string; attributes: Record<string, string> }): void {
  const { body, attributes, identity, sentAt, receiveCount, ...rest } = shown;
  // The same labels as `dlq list`: the time of the first send, kept through every redrive; the receives, ours too.
  printRecord({ 'first sent': sentAt, [RECEIVES_LABEL]: receiveCount, ...rest, payout: identityText(identity), attributes });
  printBody('body (account, card and phone numbers masked)', body);
}

/**
 * What an operator does about a message the redrive held because its payout is final or under
 * review: a redrive cannot pay such a payout, so the way on is a payout command, then `dlq delete`.
 */
export function heldNextStep(held: HeldDeadLetter): string {
  const { withdrawal_reference, platform_merchant_id, currency } = held.identity;
  const payout = `${shellWord(withdrawal_reference)} --merchant ${shellWord(platform_merchant_id)} --currency ${shellWord(currency)}`;
  const drop = `then \`payrelay dlq delete ${shellWord(held.id)} --reason "<what you did>"\``;
  switch (held.state) {
    case 'NEEDS_REVIEW':
      // "Nothing was paid": no Payout call was made, so resolving it as failed needs no --force.
      return held.payoutReason?.endsWith(NOTHING_PAID)
        ? `NEEDS_REVIEW: a redrive will not pay it: resolve it (\`payrelay payouts resolve ${payout} --as failed --evidence "<what shows it>"\`), then \`payrelay payouts retry ${payout} --new-reference <new reference>\`, ${drop}`
        : `NEEDS_REVIEW: a redrive will not pay it: once you know what happened, resolve it (\`payrelay payouts resolve ${payout} --as succeeded|failed --evidence "<what shows it>"\`), then, if FAILED, \`payrelay payouts retry ${payout} --new-reference <new reference>\`, ${drop}`;
    case 'FAILED':
      return `FAILED: a redrive will not pay it: to pay it again, \`payrelay payouts retry ${payout} --new-reference <new reference>\`, ${drop}`;
    case 'SUCCEEDED':
      return `SUCCEEDED: already paid, nothing to redrive: ${drop}`;
    case 'REVERSED':
      return `REVERSED: paid, and the money came back: decide with the beneficiary (a new payout under a new reference), ${drop}`;
    default:
      return `${held.state}: a redrive will not pay it (see \`payrelay payouts status ${payout}\`); to pay, send a corrected request under a new withdrawal_reference, ${drop}`;
  }
}

/**
 * Prints a redrive report and fails (exit 1) when moved messages failed again, when messages were
 * held in the DLQ because their payouts need a person (the DLQ, and its alarm, stay on until then), or
 * when messages were left because the payout each names could not be read.
 */
export function printRedriveReport(ctx: CommandContext, report: RedriveReport): void {
  const held = report.held.map((h) => ({ ...h, next: heldNextStep(h) }));
  ctx.out.result({ ...report, held }, () => {
    printTable(
      ['present at start', 'moved', 'failed again', 'held (payout final or in review)', 'not looked up (payout read failed)', 'skipped'],
      [[report.presentAtStart, report.moved, report.failedAgain, report.held.length, report.notLookedUp.length, report.skipped]],
    );
    if (report.failedAgain > 0) printLine(`See why with: payrelay dlq list, then payrelay dlq show <id> (attribute payrelayRedriveRun ${report.runId} marks this run's messages)`);
    if (held.length > 0) {
      printLine('Held in the DLQ, not moved: the payout each names is final or in NEEDS_REVIEW, so the worker would stop at it and nothing would be paid:');
      printTable(['id', 'payout', 'state', 'payout reason', 'next step'], held.map((h) => [h.id, identityText(h.identity), h.state, h.payoutReason, h.next]));
    }
    if (report.notLookedUp.length > 0) {
      printLine('Left in the DLQ, not moved: the payout each names could not be read, so whether it needs a person is unknown; run the redrive again once the payouts table answers:');
      printTable(['id', 'payout', 'error'], report.notLookedUp.map((u) => [u.id, identityText(u.identity), u.error]));
    }
  });
  const problems = [
    ...(report.failedAgain > 0 ? [`${report.failedAgain} moved message(s) failed again and are back in the DLQ; fix their cause first`] : []),
    ...(held.length > 0 ? [`${held.length} message(s) held in the DLQ: their payouts are final or in NEEDS_REVIEW; take the next step shown for each, then dlq delete it`] : []),
    ...(report.notLookedUp.length > 0
      ? [`${report.notLookedUp.length} message(s) left in the DLQ: the payout each names could not be read; run the redrive again once the payouts table answers`]
      : []),
  ];
  if (problems.length > 0) throw new CliError(problems.join('; '));
}

/** Runs a bounded redrive for `payouts redrive` and `dlq redrive`. */
export async function runRedrive(ctx: CommandContext, opts: { max?: number; wait: number }): Promise<void> {
  const { dlq, payouts } = await deadLetterQueue(ctx);
  const { redriveDeadLetters } = await import('@shared/app/dead-letters');
  printRedriveReport(ctx, await redriveDeadLetters({ dlq, payouts: await payouts(), log: quietLog, runId: randomUUID() }, { max: opts.max, waitMs: opts.wait * 1000 }));
}

/** Registers the bounded redrive on a parent command (`payouts redrive`, `dlq redrive`). */
export function registerRedriveCommand(parent: Command, example: string): void {
  withExample(
    parent
      .command('redrive')
      .option('--max <n>', 'move at most n messages', positiveInt)
      .option('--wait <seconds>', 'then watch the DLQ this long and report the moved messages that fail again (0: do not wait)', nonNegativeInt, 0),
    example,
  )
    .summary('move the DLQ messages back to the payouts queue, each at most once')
    .description(
      'move the messages present in the dead-letter queue when it starts back to the payouts queue, each at most once, ' +
        'then print moved / failed again / held / not looked up / skipped. A poison message that fails again stays in the DLQ (it never loops). ' +
        'A message whose payout is final or in NEEDS_REVIEW is held in the DLQ, not moved (a redrive would pay nothing), with the next step for it; exit 1 then. ' +
        'A message whose payout could not be read (a table error) is left in the DLQ and reported as not looked up; exit 1 then. ' +
        'Safe for money: the worker never pays a payout twice, whatever the message count.',
    )
    .action(async (opts: { max?: number; wait: number }, cmd: Command) => runRedrive(contextOf(cmd), opts));
}

/** `payrelay dlq list|show|delete|redrive`. */
export function registerDlqCommands(program: Command): void {
  const dlq = withExample(
    program.command('dlq').description('read the payouts dead-letter queue without consuming it, delete a message with a reason, redrive'),
    'payrelay dlq list',
    'payrelay dlq show <message id>',
  );

  withExample(dlq.command('list').option('--limit <n>', 'read at most n messages', positiveInt, 1000), 'payrelay dlq list')
    .description(
      'list the DLQ: id, first sent, receive count, reason, payout identity (account masked). Consumes nothing: each message ' +
        "is hidden for a moment while read, then made visible again (its receive count goes up by one: the count includes payrelay's own reads, not only the worker's attempts).",
    )
    .action(async (opts: { limit: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { dlq: queue } = await deadLetterQueue(ctx);
      const { listDeadLetters } = await import('@shared/app/dead-letters');
      const views = await listDeadLetters(queue, opts.limit);
      ctx.out.result(views, () => {
        printListing(
          ['id', 'first sent', RECEIVES_LABEL, 'reason', 'payout', 'account'],
          views.map((v) => [v.id, v.sentAt, v.receiveCount, v.reason, identityText(v.identity), v.accountMasked]),
          'The dead-letter queue is empty (a message another command is reading right now stays hidden for a moment).',
        );
        if (views.length > 0) printLine(`${views.length} message(s)${views.length >= opts.limit ? ` (the first ${opts.limit}; raise --limit for more)` : ''}`);
        if (views.length > 0) printLine(RECEIVES_NOTE);
      });
    });

  withExample(dlq.command('show').argument('<id>', 'the message id (from `dlq list`)'), 'payrelay dlq show 3f1c...')
    .description('show one DLQ message: its body (account number masked), reason and attributes. Consumes nothing.')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { dlq: queue } = await deadLetterQueue(ctx);
      const { showDeadLetter } = await import('@shared/app/dead-letters');
      const shown = await showDeadLetter(queue, id);
      ctx.out.result(shown, () => printDeadLetter(shown));
    });

  withExample(
    dlq
      .command('delete')
      .argument('<id>', 'the message id (from `dlq list`)')
      .requiredOption('--reason <text>', 'why it can be dropped (recorded in the audit line)')
      .option('--by <name>', 'who deletes (default: your AWS identity for --stack, else <OS user>@<host>); the identity running the command is recorded beside a name given', nonEmptyText),
    'payrelay dlq delete 3f1c... --reason "duplicate of WD-1; paid through retry WD-1-R1"',
  )
    .description('delete one DLQ message for good. Writes an audit line (who, the identity running the command when it differs, why, the payout it named) as JSON on stderr.')
    .action(async (id: string, opts: { reason: string; by?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { dlq: queue, by, actor } = await deadLetterQueue(ctx);
      const { deleteDeadLetter } = await import('@shared/app/dead-letters');
      const deleted = await deleteDeadLetter({ dlq: queue, log: auditLog }, { id, reason: opts.reason, by: await by(opts.by), actor: await actor() });
      ctx.out.result({ deleted }, () => printLine(`deleted ${deleted.id}${deleted.identity ? ` (${identityText(deleted.identity)})` : ''}`));
    });

  registerRedriveCommand(dlq, 'payrelay dlq redrive --max 100 --wait 60');
}
