import { Option, type Command } from 'commander';
import { contextOf, emailAddress, nonEmptyText, withExample, type CommandContext } from '../context';
import { printTable, printLine } from '../output';
import { requireEnv } from '../target';

/** The two names the provider's documents give the key-reset operation. */
const RESET_PATHS = ['ResetPartnerKeys', 'GenKeysForPartner'] as const;

interface PartnerOptions {
  partnerCode: string;
  email: string;
  resetPath?: string;
}

async function call(ctx: CommandContext, opts: PartnerOptions, operation: 'onboard' | 'reset-keys'): Promise<void> {
  const target = await ctx.target();
  const { PayoutServiceClient } = await import('@shared/providers/payout-client');
  const client = new PayoutServiceClient({
    baseUrl: requireEnv(target, 'PAYOUT_API_BASE_URL'),
    ...(opts.resetPath ? { resetKeysPath: opts.resetPath } : {}),
  });
  try {
    const input = { partner_code: opts.partnerCode, email: opts.email };
    const answer = operation === 'onboard' ? await client.onboardPartner(input) : await client.resetPartnerKeys(input);
    ctx.out.result(answer, () => {
      printTable(['operation', 'success', 'message'], [[operation, answer.success, answer.message]]);
      const where = target.urls.simulator ? ` (local simulator: GET ${target.urls.simulator}/__admin/outbox)` : '';
      printLine(`The keys are e-mailed to ${opts.email} as a one-time link${where}. Store them with: payrelay secrets put provider`);
      if (operation === 'reset-keys') printLine('The old keys stop working now; running functions refresh the secret on their first 401.');
    });
  } finally {
    client.close();
  }
}

/** `payrelay partner onboard|reset-keys` (the payout service's partner endpoints). */
export function registerPartnerCommands(program: Command): void {
  const partner = withExample(
    program.command('partner').description('register a partner with the payout service, reset its keys'),
    'payrelay partner onboard --partner-code ACME --email ops@acme.example',
  );
  withExample(
    partner
      .command('onboard')
      .requiredOption('--partner-code <code>', 'code signifying the partner', nonEmptyText)
      .requiredOption('--email <email>', 'partner e-mail; receives the keys as a one-time link', emailAddress),
    'payrelay partner onboard --partner-code ACME --email ops@acme.example',
  )
    .description('OnboardPartner: call once per partner; keys and partner_id are e-mailed')
    .action((opts: PartnerOptions, cmd: Command) => call(contextOf(cmd), opts, 'onboard'));
  withExample(
    partner
      .command('reset-keys')
      .requiredOption('--partner-code <code>', 'the code used at onboarding', nonEmptyText)
      .requiredOption('--email <email>', 'partner e-mail; receives the new keys', emailAddress)
      .addOption(
        new Option('--reset-path <segment>', "path segment of the operation: the documented ResetPartnerKeys, or GenKeysForPartner of the provider's example")
          .choices(RESET_PATHS)
          .default('ResetPartnerKeys'),
      ),
    'payrelay partner reset-keys --partner-code ACME --email ops@acme.example',
  )
    .description('ResetPartnerKeys: new keys by e-mail; the old ones stop working at once (then: payrelay secrets put provider)')
    .action((opts: PartnerOptions, cmd: Command) => call(contextOf(cmd), opts, 'reset-keys'));
}
