import type { Command } from 'commander';
import { portArg } from '@local/option-args';
import { contextOf, withExample } from '../context';
import { CliError, printLine } from '../output';

const DEFAULT_PORT = 3900;

/** `payrelay console`: the web console on 127.0.0.1 for the local stack or a deployed one. */
export function registerConsoleCommand(program: Command): void {
  withExample(
    program.command('console').option('--port <port>', 'port on 127.0.0.1 (0 picks a free one)', portArg, DEFAULT_PORT),
    'payrelay console',
    'payrelay console --stack payrelay-prod --profile ops',
  )
    .description(
      'serve the ops console on 127.0.0.1: overview, payouts (resolve, retry), review, DLQ (redrive, delete), callbacks (replay), quarantine (calibrate), KYC subjects (confirm) and collections; every action has a confirmation step. ' +
        'It uses your own AWS credentials (--stack/--profile) or the local stack; nothing is deployed. ' +
        'Open the printed URL: it carries a token that is new at every start. Stop with Ctrl-C.',
    )
    .action(async (opts: { port: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      // Finding the target (CloudFormation for --stack), loading the console and reading its secrets can
      // take seconds on a busy machine: say at once that it is under way (stderr; the URL goes to stdout).
      ctx.out.note(`starting the console (reading the target, then serving on 127.0.0.1, ${opts.port === 0 ? 'on a free port' : `port ${opts.port}`})…`);
      const target = await ctx.target();
      const { createConsoleServices } = await import('../console/services');
      const { startConsole } = await import('../console/server');
      const services = await createConsoleServices(target);
      let handle;
      try {
        handle = await startConsole({ services, port: opts.port });
      } catch (error) {
        services.close();
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError(`port ${opts.port} on 127.0.0.1 is in use: pick another with --port`);
        throw error;
      }
      ctx.out.result({ url: handle.loginUrl, target: target.label }, () => {
        printLine(`payrelay console for ${target.label}`);
        printLine(`open: ${handle.loginUrl}`);
        printLine('(the token in this URL is new at every start; keep it to yourself. Ctrl-C stops the console.)');
      });
      await new Promise<void>((resolve) => {
        const stop = (): void => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void handle.close().then(resolve);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
