import type { Command } from 'commander';
import { contextOf, positiveInt, withExample } from '../context';
import { CliError, printTable, printLine } from '../output';

/** `payrelay demo`: the scenario of docs/cli.md through the running local stack. */
export function registerDemoCommand(program: Command): void {
  withExample(
    program
      .command('demo')
      .option('--timeout <seconds>', 'give up after this long', positiveInt, 180),
    'npm start            # in one terminal, then in another:\n  $ payrelay demo',
  )
    .description(
      'drive a scenario through the local stack: a KYC order completed through callbacks, a collection order paid by the customer, then 50 payouts ' +
        '(47 normal, a name mismatch, an unknown account, an ambiguous time-out), wait until all are final, print a summary',
    )
    .action(async (opts: { timeout: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { runDemo, refuseNonLocalDemo } = await import('../demo-scenario');
      refuseNonLocalDemo(ctx.globals);
      const target = await ctx.target();
      const result = await runDemo(target, (line) => ctx.out.note(line), { timeoutMs: opts.timeout * 1000 });
      ctx.out.result(result, () => {
        printLine('');
        printLine(`KYC: ${result.kyc.userReference} -> ${result.kyc.phase}/${result.kyc.decision}${result.kyc.confirmed ? ', confirmed by pull' : ''}`);
        const c = result.collection;
        printLine(`Collection: ${c.orderId} (${c.amount} ${c.currency}) -> order ${c.orderStatus}, payment ${c.paymentStatus}`);
        printTable(['final state', 'payouts'], Object.entries(result.counts).map(([state, n]) => [state, n]));
        printTable(
          ['withdrawal_reference', 'scenario', 'state', 'reason'],
          result.payouts.filter((p) => p.role !== 'normal').map((p) => [p.withdrawal_reference, p.role, p.state, p.reason]),
        );
        printLine(
          `Simulator ledger: ${result.ledgerEntries} references, at most ${result.maxExecutions} execution per reference. ` +
            `Finished in ${(result.elapsedMs / 1000).toFixed(1)} s.`,
        );
        printLine(`Try: payrelay payouts status ${result.payouts[0]?.withdrawal_reference ?? ''}`);
      });
      if (!result.allAsExpected) {
        const off = result.payouts.filter((p) => p.state !== p.expected).map((p) => `${p.withdrawal_reference} ${p.state} (expected ${p.expected})`);
        const c = result.collection;
        if (c.orderStatus !== 'COMPLETED' || c.paymentStatus !== 'PAID') off.push(`collection ${c.orderId} ${c.orderStatus}/${c.paymentStatus} (expected COMPLETED/PAID)`);
        throw new CliError(`the demo ended with unexpected states: ${off.join('; ')}`);
      }
      if (result.maxExecutions > 1) throw new CliError('a payout was executed more than once');
    });
}
