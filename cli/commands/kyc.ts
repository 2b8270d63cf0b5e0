import type { Command } from 'commander';
import { contextOf, countryCode, emailAddress, nonEmptyText, parseSince, phoneNumber, positiveInt, redirectUrl, timeArg, withExample, type CommandContext } from '../context';
import { CliError, EXIT, describeError, printListing, printRecord, printTable, shellWord, printLine } from '../output';
import type { ReceivedEvent } from '@shared/ports/callbacks';
import { cliLog, noTelemetry } from '../log';
import { startProgress, type Progress } from '../progress';
import { requireEnv, type Target } from '../target';

async function kycClient(ctx: CommandContext) {
  const target = await ctx.target();
  const { KycServiceClient } = await import('@shared/providers/kyc-client');
  return { target, client: new KycServiceClient({ baseUrl: requireEnv(target, 'KYC_API_BASE_URL'), timeoutMs: 10_000 }) };
}

async function kycSecret(target: Target) {
  const { cachedSecret, kycSecretSchema } = await import('@shared/adapters/secrets');
  return cachedSecret(requireEnv(target, 'KYC_SECRET_ID'), kycSecretSchema);
}

/**
 * Runs the pull-confirmation sweep over approvals waiting in the `unconfirmed-approvals` index
 * (docs/webhooks.md): each is confirmed only when the KYC service's verification-status says approved.
 */
export async function confirmApprovals(target: Target, limit = 100) {
  const { confirmPendingApprovals } = await import('@shared/app/confirm-kyc-approval');
  const { createKycRepository } = await import('@shared/adapters/kyc-repository');
  const { kycVerifier } = await import('@shared/adapters/kyc-verifier');
  const { KycServiceClient } = await import('@shared/providers/kyc-client');
  const client = new KycServiceClient({ baseUrl: requireEnv(target, 'KYC_API_BASE_URL'), timeoutMs: 10_000 });
  try {
    return await confirmPendingApprovals(
      {
        subjects: createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }),
        verifier: kycVerifier(client),
        clock: { now: () => new Date() },
        log: cliLog,
      },
      { limit },
    );
  } finally {
    client.close();
  }
}

/** Prints a provider answer: its fields as a table, or JSON. */
function show(ctx: CommandContext, answer: unknown): void {
  ctx.out.result(answer, () => {
    if (Array.isArray(answer)) {
      printListing(
        ['_id', 'name', 'flow_id'],
        answer.map((t: Record<string, unknown>) => [String(t._id ?? ''), String(t.name ?? ''), String(t.flow_id ?? '')]),
        'The KYC service lists no KYC types.',
      );
    } else if (answer && typeof answer === 'object') printRecord(answer as Record<string, unknown>);
    else printLine(String(answer));
  });
}

/**
 * Prints an answer of register or request-token without its verification token (`value`) unless
 * `--show-token` asks for it. The token verifies the app (`kyc app verify`), so whoever reads it can
 * verify the app in your name: it is a secret (never printed or logged by default), sent to the
 * registration e-mail, which is where the operator takes it from. payrelay never reads it after
 * verification, so it is not stored either (docs/cli.md, "KYC").
 */
function showTokenAnswer(ctx: CommandContext, target: Target, answer: { value?: string }, opts: { email: string; showToken?: boolean }): void {
  const { value, ...rest } = answer;
  ctx.out.result(opts.showToken ? answer : rest, () => {
    printRecord(opts.showToken ? answer : rest);
    if (value === undefined) return;
    const outbox = target.urls.simulator ? ` (local simulator: GET ${target.urls.simulator}/__admin/outbox)` : '';
    const shown = opts.showToken ? 'It is shown above because of --show-token: keep it out of tickets and chats.' : 'It is not shown here (--show-token prints it).';
    printLine(`The 6-digit verification token was e-mailed to ${opts.email}${outbox}. ${shown}`);
    printLine(`Verify the app with it: payrelay kyc app verify --email ${shellWord(opts.email)} --code <token>`);
  });
}

const SHOW_TOKEN_HELP = 'also print the verification token (it verifies the app: a secret; by default it is only e-mailed)';

function registerApp(kyc: Command): void {
  const app = withExample(
    kyc.command('app').description('register and verify the KYC app (steps 1-2 of the KYC flow)'),
    'payrelay kyc app register --name acme-payouts --email kyc@acme.example',
  );
  withExample(
    app
      .command('register')
      .requiredOption('--name <name>', 'app name', nonEmptyText)
      .requiredOption('--email <email>', 'company e-mail; receives the 6-digit verification token', emailAddress)
      .option('--origin <domain...>', 'domains the app calls from (whitelisted)', [])
      .option('--show-token', SHOW_TOKEN_HELP),
    'payrelay kyc app register --name acme-payouts --email kyc@acme.example --origin https://acme.example',
  )
    .description('register the app; then verify it with the token from the e-mail (and put app_id in the kyc secret)')
    .action(async (opts: { name: string; email: string; origin: string[]; showToken?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { client, target } = await kycClient(ctx);
      showTokenAnswer(ctx, target, await client.registerApp({ name: opts.name, email: opts.email, origin: opts.origin }), opts);
    });
  withExample(
    app.command('verify').requiredOption('--email <email>', 'the registration e-mail', emailAddress).requiredOption('--code <token>', 'the 6-digit token'),
    'payrelay kyc app verify --email kyc@acme.example --code 123456',
  )
    .description('verify the app with the e-mailed token')
    .action(async (opts: { email: string; code: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { client } = await kycClient(ctx);
      show(ctx, await client.verifyApp({ email: opts.email, code: opts.code }));
    });
  withExample(
    app.command('request-token').requiredOption('--email <email>', 'the registration e-mail', emailAddress).option('--show-token', SHOW_TOKEN_HELP),
    'payrelay kyc app request-token --email kyc@acme.example',
  )
    .description('have a new verification token sent to the e-mail')
    .action(async (opts: { email: string; showToken?: boolean }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { client, target } = await kycClient(ctx);
      showTokenAnswer(ctx, target, await client.requestToken({ email: opts.email }), opts);
    });
}

interface OrderOptions {
  individual?: boolean;
  business?: boolean;
  reference: string;
  redirect?: string;
  kycType?: string;
  fullName?: string;
  email?: string;
  phone?: string;
  businessName?: string;
  country?: string;
  businessEmail?: string;
  stateOfJurisdiction?: string;
  customFile?: string[];
}

function need(value: string | undefined, flag: string, kind: string): string {
  // A missing required option is a usage error (exit 2), as commander gives for the unconditional ones.
  if (!value) throw new CliError(`${flag} is required for --${kind}`, EXIT.usage);
  return value;
}

function registerOrder(kyc: Command): void {
  const order = withExample(
    kyc.command('order').description('KYC orders'),
    'payrelay kyc order create --individual --reference user-42 --full-name "Ama Mensah" --email ama@example.com --phone +233200000000',
  );
  withExample(
    order
      .command('create')
      .option('--individual', 'an individual order, which needs --full-name, --email and --phone (give this or --business)')
      .option('--business', 'a business order, which needs --business-name, --country and --business-email')
      .requiredOption('--reference <user_reference>', 'your identifier of the user; callbacks carry it as user_reference')
      .option('--redirect <url>', 'where the user goes after the journey: an absolute URL (https://... or an app link such as myapp://kyc/done)', redirectUrl)
      .option('--kyc-type <id>', 'KYC type id (default: looked up by name)')
      .option('--full-name <name>', "the user's full name (required with --individual)")
      .option('--email <email>', "the user's e-mail (required with --individual)", emailAddress)
      .option('--phone <phone>', "the user's phone number in international form: + and the country code, e.g. +233200000000 or +233 20 000 0000 (required with --individual)", phoneNumber)
      .option('--business-name <name>', "the business's registered name (required with --business)")
      .option('--country <code>', 'three-letter country code, e.g. GHA or NGA (required with --business)', countryCode)
      .option('--business-email <email>', "the business's e-mail (required with --business)", emailAddress)
      .option('--state-of-jurisdiction <country>', 'country of incorporation, three letters (default: --country)', countryCode)
      .option('--custom-file <name...>', 'extra files to collect from the business'),
    'payrelay kyc order create --individual --reference user-42 --full-name "Ama Mensah" --email ama@example.com --phone +233200000000',
    'payrelay kyc order create --business --reference biz-7 --business-name "Acme Ltd" --country GHA --business-email kyc@acme.example',
  )
    .description('create a KYC order whose callbacks come back to this deployment; prints the verification_url for the user')
    .action(async (opts: OrderOptions, cmd: Command) => {
      const ctx = contextOf(cmd);
      if (opts.individual === opts.business) throw new CliError('give exactly one of --individual or --business', EXIT.usage);
      // What the order needs is checked before any stack or service is looked for.
      const input =
        opts.individual
          ? {
              kind: 'individual' as const,
              reference: opts.reference,
              full_name: need(opts.fullName, '--full-name', 'individual'),
              email: need(opts.email, '--email', 'individual'),
              phone: need(opts.phone, '--phone', 'individual'),
            }
          : {
              kind: 'business' as const,
              reference: opts.reference,
              business_name: need(opts.businessName, '--business-name', 'business'),
              country: need(opts.country, '--country', 'business'),
              business_email: need(opts.businessEmail, '--business-email', 'business'),
              ...(opts.stateOfJurisdiction ? { state_of_jurisdiction: opts.stateOfJurisdiction } : {}),
              ...(opts.customFile ? { custom_files: opts.customFile } : {}),
            };
      const { target, client } = await kycClient(ctx);
      const apiBaseUrl = target.urls.gateway;
      if (!apiBaseUrl) throw new CliError(`${target.label} has no API URL (stack output ApiUrl) for the callback`);
      const { createKycOrder } = await import('@shared/app/create-kyc-order');
      const { createKycRepository } = await import('@shared/adapters/kyc-repository');
      const created = await createKycOrder(
        {
          kyc: client,
          orders: createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }),
          secret: await kycSecret(target),
          apiBaseUrl,
          clock: { now: () => new Date() },
          log: cliLog,
        },
        { ...input, ...(opts.redirect ? { redirect: opts.redirect } : {}), ...(opts.kycType ? { kycType: opts.kycType } : {}) },
      );
      ctx.out.result(created, () => printRecord({ ...created }));
    });
}

/** At most this many of a user's newest stored callbacks are listed when no callback was applied to it. */
const STORED_CALLBACKS_SHOWN = 10;

/** A stored KYC callback naming a user with no subject: what `kyc status` lists of it. */
type StoredCallbackNaming = Pick<ReceivedEvent, 'eventId' | 'receivedAt' | 'recognized' | 'unrecognizedReason'>;

/**
 * The newest stored KYC callbacks of this app naming the user (one Query of the by-reference index),
 * read only when no callback was applied to it: an unrecognized callback (an unknown kyc_status) is
 * stored under the user_reference its body names and applied to nothing, and "no callback received"
 * would send the operator the wrong way.
 */
async function storedCallbacksNaming(target: Target, appId: string, userReference: string): Promise<StoredCallbackNaming[]> {
  const { createEventStore } = await import('@shared/adapters/event-store');
  const page = await createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }).listCallbacks({ reference: userReference, source: 'kyc', limit: STORED_CALLBACKS_SHOWN });
  return page.events
    .filter((event) => event.appId === undefined || event.appId === appId)
    .map(({ eventId, receivedAt, recognized, unrecognizedReason }) => ({ eventId, receivedAt, recognized, ...(unrecognizedReason === undefined ? {} : { unrecognizedReason }) }));
}

/** `kyc status` for a user no callback was applied to: none stored, or those stored and why they were not applied. */
function printNoSubject(userReference: string, stored: readonly StoredCallbackNaming[]): void {
  if (stored.length === 0) {
    printLine('  no callback received for this user yet (a user_reference payrelay never heard of reads the same: check it against the reference of the KYC order)');
    return;
  }
  const unrecognized = stored.filter((event) => !event.recognized);
  const waiting = stored.length - unrecognized.length;
  if (unrecognized.length > 0) {
    printLine(
      `  no callback applied to this user, but ${unrecognized.length} stored callback(s) name ${userReference} that payrelay did not recognize (applied to nothing; the user_reference is what the body says):`,
    );
  } else printLine(`  no callback applied to this user yet; ${waiting} stored callback(s) name ${userReference} and wait for the applier:`);
  printTable(
    ['received at', 'recognized', 'event id'],
    stored.map((event) => [event.receivedAt, event.recognized ? 'yes (not applied yet)' : `no: ${event.unrecognizedReason ?? ''}`, event.eventId]),
  );
  if (unrecognized.length > 0) {
    printLine('  Read one with `payrelay events show <event id>`; once an upgrade recognizes its shape, `payrelay events replay --since <its received at>` applies it.');
  } else printLine('  `payrelay events replay --since <received at>` applies them now.');
}

/** Fields of a KYC subject that order its updates (positions, version), not its state: left out of `kyc status`'s table. */
const KYC_BOOKKEEPING = new Set(['position', 'orderPosition', 'profilePosition', 'version', 'lastEventId']);

/** Answers shorter than this finish before a progress bar would tell anything. */
const CATCH_UP_PROGRESS_FROM = 200;

interface CatchUpOpts {
  since?: string;
  dryRun?: boolean;
}

async function catchUpAction(opts: CatchUpOpts, cmd: Command): Promise<void> {
  const ctx = contextOf(cmd);
  const since = opts.since === undefined ? undefined : parseSince(opts.since);
  const { target, client } = await kycClient(ctx);
  const appId = (await (await kycSecret(target)).get()).app_id;
  const { catchUpKycCallbacks } = await import('@shared/app/catch-up-kyc-callbacks');
  const { createEventStore } = await import('@shared/adapters/event-store');
  const { createKycRepository } = await import('@shared/adapters/kyc-repository');
  const { webhookEnvSchema } = await import('@shared/config/webhook');
  const v = await import('@shared/validation/valibot');
  let progress: Progress | undefined;
  const result = await catchUpKycCallbacks(
    {
      events: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }),
      subjects: createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }),
      responses: client,
      retentionDays: v.parse(webhookEnvSchema.entries.EVENT_RETENTION_DAYS, target.env.EVENT_RETENTION_DAYS),
      clock: { now: () => new Date() },
      log: cliLog,
      telemetry: noTelemetry,
    },
    {
      appId,
      ...(since ? { since } : {}),
      dryRun: opts.dryRun === true,
      onProgress: (done, total) => {
        if (total < CATCH_UP_PROGRESS_FROM) return;
        progress ??= startProgress('catch-up', total, 'callbacks');
        progress.update(done);
      },
    },
  ).finally(() => {
    progress?.stop();
    client.close();
  });
  ctx.out.result({ ...result, ...(since ? { since: since.toISOString() } : {}) }, () => {
    if (result.dryRun) printLine('Dry run: nothing was stored or applied.');
    printTable(
      ['seen', 'already stored', result.dryRun ? 'would recover' : 'recovered', 'unrecognized', 'failed', 'before --since'],
      [[result.seen, result.alreadyStored, result.recovered, result.unrecognized, result.failed, result.beforeSince]],
    );
    if (result.subjects.length > 0) {
      const shown = result.subjects.slice(0, 20).join(', ');
      printLine(`Users with recovered callbacks: ${shown}${result.subjects.length > 20 ? ` and ${result.subjects.length - 20} more` : ''}`);
    }
  });
  const missed = result.recovered + result.unrecognized + result.failed;
  if (missed > 0 && !result.dryRun) {
    ctx.out.note(`note: ${missed} callback(s) had not been delivered to ${target.label}; check the callback route and the KYC secret's callback_token (docs/webhooks.md)`);
  }
  if (result.failed > 0) {
    throw new CliError(`${result.failed} recovered callback(s) are stored but their user kept changing while they were applied: run \`payrelay events replay --since 1h\` to apply them`);
  }
}

/** `payrelay kyc app register|verify|request-token`, `kyc types`, `kyc order create`, `kyc confirm`, `kyc status`, `kyc catch-up`. */
export function registerKycCommands(program: Command): void {
  const kyc = withExample(
    program.command('kyc').description('KYC app setup, KYC types, orders, approval confirmation, missed-callback catch-up and user status'),
    'payrelay kyc types',
    'payrelay kyc status user-42',
  );
  registerApp(kyc);
  withExample(kyc.command('types'), 'payrelay kyc types')
    .description('list the KYC types (Individual, Business) and their ids')
    .action(async (_opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { client } = await kycClient(ctx);
      show(ctx, await client.getKycTypes());
    });
  registerOrder(kyc);
  withExample(
    kyc.command('confirm').option('--limit <n>', 'confirm at most n approvals', positiveInt, 100),
    'payrelay kyc confirm',
  )
    .description('confirm waiting approvals by pulling verification-status (an approval counts only once confirmed)')
    .action(async (opts: { limit: number }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const result = await confirmApprovals(await ctx.target(), opts.limit);
      ctx.out.result(result, () =>
        printTable(['checked', 'confirmed', 'not yet', 'contradicted', 'failed'], [[result.checked, result.confirmed, result.notYet, result.contradicted, result.failed]]),
      );
    });
  withExample(
    kyc
      .command('catch-up')
      .option('--since <time>', "only callbacks whose own timestamp is at or after this: ISO 8601 time or a duration back from now (30m, 6h, 2d)", timeArg)
      .option('--dry-run', 'count what would be recovered; store and apply nothing'),
    'payrelay kyc catch-up --dry-run',
    'payrelay kyc catch-up --since 2d',
    'payrelay --stack payrelay-prod --profile ops kyc catch-up --since 2026-11-20T00:00:00Z --json',
  )
    .description(
      'recover KYC callbacks that never arrived: read every callback the KYC service sent for the app (GET /responses) and store and ' +
        'apply the ones missing here, exactly as if they had been delivered; callbacks already stored are counted, not applied again',
    )
    .action(catchUpAction);
  withExample(
    kyc.command('status').argument('<user_reference>', 'your identifier of the user').option('--app-id <id>', 'KYC app id (default: from the kyc secret)', nonEmptyText),
    'payrelay kyc status user-42',
  )
    .description(
      "a user's KYC state here (the projection built from callbacks) and at the KYC service (verification-status); with no callback applied to the user, " +
        'the stored callbacks that name it and why they were not applied (an unrecognized kyc_status, say)',
    )
    .action(async (userReference: string, opts: { appId?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      if (userReference.trim() === '') throw new CliError('user_reference is empty: give the reference the KYC order was created with', EXIT.invalidInput);
      const { MAX_REFERENCE_LENGTH } = await import('@shared/domain/callbacks');
      if (userReference.length > MAX_REFERENCE_LENGTH) {
        throw new CliError(`user_reference is longer than ${MAX_REFERENCE_LENGTH} characters: no KYC subject has such a reference`, EXIT.invalidInput);
      }
      const { target, client } = await kycClient(ctx);
      const appId = opts.appId ?? (await (await kycSecret(target)).get()).app_id;
      const { createKycRepository } = await import('@shared/adapters/kyc-repository');
      const subject = await createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }).getSubject({ appId, userReference });
      const stored = subject ? undefined : await storedCallbacksNaming(target, appId, userReference);
      const { isApprovalConfirmed } = await import('@shared/domain/kyc-subject');
      let provider: unknown;
      try {
        provider = await client.getVerificationStatus({ app_id: appId, user_reference: userReference });
      } catch (error) {
        provider = { error: describeError(error) };
      }
      ctx.out.result({ appId, userReference, local: subject ?? null, ...(stored ? { storedCallbacks: stored } : {}), provider }, () => {
        printLine('Here (from callbacks):');
        // The projection's ordering bookkeeping stays in --json; a person reads the state and the profile.
        if (subject) {
          const shown: Record<string, unknown> = Object.fromEntries(Object.entries(subject).filter(([key]) => !KYC_BOOKKEEPING.has(key)));
          // An approval counts for money only once a pull confirmed it: say so beside the decision.
          if (subject.decision === 'approved') {
            shown.confirmed = isApprovalConfirmed(subject)
              ? `yes, by pull at ${subject.confirmedAt ?? ''}`
              : 'no: waiting for a confirming pull (payouts gated on KYC wait; `payrelay kyc confirm` asks now)';
          }
          printRecord(shown);
        } else printNoSubject(userReference, stored ?? []);
        printLine('At the KYC service (verification-status):');
        if (provider && typeof provider === 'object') {
          const p = provider as { status?: unknown; error?: unknown; record?: { order?: { status?: unknown } } };
          printRecord({ status: p.status, order_status: p.record?.order?.status, error: p.error });
        }
      });
    });
}
