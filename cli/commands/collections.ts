import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { Option } from 'commander';
import { parseAmount } from '@shared/domain/money';
import { ORDER_STATUSES, PAYMENT_STATUSES, type Collection, type CollectionOrderStatus, type CollectionPaymentStatus } from '@shared/domain/collection';
import { contextOf, listLimit, nonEmptyText, parseSince, timeArg, upperCaseChoice, withExample, type CommandContext } from '../context';
import { CliError, EXIT, describeError, exitCodeOf, optionsText, printListing, printRecord, printTable, shellWord, printLine } from '../output';
import { payoutServiceFor } from '../operator';
import { requireEnv } from '../target';
import { cliLog } from '../log';

/** A fresh order id when none is given: `col-<UTC date>-<8 hex>`, unique enough for one deployment. */
export function newOrderId(now = new Date()): string {
  return `col-${now.toISOString().slice(0, 10).replaceAll('-', '')}-${randomBytes(4).toString('hex')}`;
}

/** The collections table of the target, imported only after its env is applied. */
async function collectionStore(ctx: CommandContext) {
  const target = await ctx.target();
  const { createCollectionRepository } = await import('@shared/adapters/collection-repository');
  return { target, collections: createCollectionRepository({ tableName: requireEnv(target, 'COLLECTIONS_TABLE_NAME') }) };
}

/** A collection as a flat row for tables and JSON (the virtual account number is stored masked). */
export function collectionSummary(collection: Collection): Record<string, unknown> {
  return {
    order_id: collection.partnerOrderId,
    platform_merchant_id: collection.platformMerchantId,
    amount: collection.amount,
    currency: collection.currency,
    order_status: collection.orderStatus,
    /** Final order statuses later notifications gave (the first stays; a person settles it). */
    contradicted_by: collection.contradictedBy,
    payment_status: collection.paymentStatus,
    creation: collection.creation,
    order_reference: collection.orderReference,
    virtual_account: collection.virtualAccount,
    created_at: collection.createdAt,
    updated_at: collection.updatedAt,
  };
}

function registerCreate(collections: Command): void {
  withExample(
    collections
      .command('create')
      .requiredOption('--amount <amount>', 'the amount to collect, a decimal string valid for the currency (e.g. 40 or 40.50)')
      .requiredOption('--currency <code>', 'the currency of the amount (e.g. GHS)')
      .option('--order-id <id>', "payrelay's id of the order, sent as partner_order_id (default: a new col-<date>-<hex> id)", nonEmptyText),
    'payrelay collections create --amount 40 --currency GHS',
    'payrelay collections create --amount 12.50 --currency GHS --order-id INV-2026-0042',
  )
    .description(
      'ask the payout service for a collection order: the customer pays the amount into the virtual account it answers with. ' +
        'Stored first (an order id is used once), then sent; the order and payment statuses then move only through order notifications. ' +
        'Path and body of the request follow COLLECTION_ORDER_PATH and COLLECTION_ORDER_BODY (docs/collections.md).',
    )
    .action(async (opts: { amount: string; currency: string; orderId?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      const order = { partnerOrderId: opts.orderId ?? newOrderId(), amount: opts.amount, currency: opts.currency.trim().toUpperCase() };
      // The amount against its currency before any stack is looked for: invalid input (exit 3), said at once.
      parseAmount(order.amount, order.currency);
      const { target, collections } = await collectionStore(ctx);
      const { provider, credentials } = await payoutServiceFor(target);
      try {
        const { createCollection } = await import('@shared/app/collections');
        const { systemClock } = await import('@shared/adapters/system-clock');
        let created;
        try {
          created = await createCollection({ collections, provider, credentials, clock: systemClock, log: cliLog }, order);
        } catch (error) {
          const { ProviderError } = await import('@shared/providers/provider-errors');
          if (!(error instanceof ProviderError) || (error.kind !== 'unavailable' && error.kind !== 'unauthorized')) throw error;
          // Recorded ("requested") before it is sent: a rerun without the id would leave this one so for good.
          throw new CliError(
            `${describeError(error)}. Collection ${order.partnerOrderId} was not sent (\`payrelay collections status ${shellWord(order.partnerOrderId)}\` shows it); ` +
              `once that is fixed, send it with the same id: payrelay collections create --amount ${shellWord(order.amount)} --currency ${order.currency} --order-id ${shellWord(order.partnerOrderId)}`,
            exitCodeOf(error),
          );
        }
        const { collection, virtualAccountNumber } = created;
        ctx.out.result({ ...collectionSummary(collection), virtual_account_number: virtualAccountNumber ?? null }, () => {
          printRecord({ ...collectionSummary(collection), virtual_account_number: virtualAccountNumber });
          if (virtualAccountNumber) ctx.out.note('The customer pays into virtual_account_number; payrelay keeps it masked and does not show it again.');
          ctx.out.note(`Follow it with: payrelay collections status ${shellWord(collection.partnerOrderId)}`);
        });
        if (collection.creation === 'refused') {
          const reason = collection.history.at(-1)?.note ?? 'no reason given';
          throw new CliError(`the provider refused collection ${collection.partnerOrderId}; it is FAILED: ${reason}`, EXIT.refused);
        }
        if (collection.creation === 'unknown') {
          throw new CliError(
            `the provider's answer about collection ${collection.partnerOrderId} is unclear; it stays PENDING. ` +
              `Run the same command with --order-id ${shellWord(collection.partnerOrderId)} to send it again; if it exists, its notifications settle it.`,
            EXIT.unreachable,
          );
        }
      } finally {
        provider.close();
      }
    });
}

function registerStatusAndList(collections: Command): void {
  withExample(
    collections.command('status').argument('<order-id>', 'the order id (partner_order_id) given or printed by `collections create`'),
    'payrelay collections status INV-2026-0042',
  )
    .description('show a collection order: its order and payment status, the provider reference, and every change with the notification that made it')
    .action(async (orderId: string, _opts: unknown, cmd: Command) => {
      const ctx = contextOf(cmd);
      const { collections } = await collectionStore(ctx);
      const { getCollection } = await import('@shared/app/collections');
      const collection = await getCollection({ collections }, orderId);
      ctx.out.result({ ...collectionSummary(collection), history: collection.history }, () => {
        printRecord(collectionSummary(collection));
        printTable(
          ['at', 'order', 'payment', 'cause', 'event', 'note'],
          collection.history.map((h) => [h.at, h.orderStatus, h.paymentStatus, h.cause, h.eventId, h.note]),
        );
      });
    });

  withExample(
    collections
      .command('list')
      .option('--since <time>', 'oldest creation time: ISO 8601 or a duration back from now (30m, 6h, 2d)', timeArg, '7d')
      .option('--until <time>', 'newest creation time, exclusive (same forms; default: now)', timeArg)
      .addOption(upperCaseChoice(new Option('--order-status <status>', 'only orders in this order status (any case)'), ORDER_STATUSES))
      .addOption(upperCaseChoice(new Option('--payment-status <status>', 'only orders in this payment status (any case)'), PAYMENT_STATUSES))
      .option('--limit <n>', 'show at most n, newest first (at most 1000)', listLimit, 100)
      .option('--cursor <cursor>', 'the next page: the cursor printed under the previous page', nonEmptyText),
    'payrelay collections list',
    'payrelay collections list --since 30d --payment-status PAID',
  )
    .description('list collection orders created in a time range, newest first, a page at a time (reads an index by day, never the whole table)')
    .action(
      async (
        opts: { since: string; until?: string; orderStatus?: CollectionOrderStatus; paymentStatus?: CollectionPaymentStatus; limit: number; cursor?: string },
        cmd: Command,
      ) => {
        const ctx = contextOf(cmd);
        const now = new Date();
        const since = parseSince(opts.since, now);
        const until = opts.until === undefined ? now : parseSince(opts.until, now);
        const { collections } = await collectionStore(ctx);
        const { listCollections } = await import('@shared/app/collections');
        const page = await listCollections(
          { collections, clock: { now: () => now } },
          { since, until, orderStatus: opts.orderStatus, paymentStatus: opts.paymentStatus, limit: opts.limit, cursor: opts.cursor },
        );
        const shown = page.collections;
        ctx.out.result({ collections: shown.map(collectionSummary), cursor: page.cursor ?? null }, () => {
          const statuses = optionsText([['--order-status', opts.orderStatus], ['--payment-status', opts.paymentStatus]]);
          const range = `created between ${since.toISOString()} and ${until.toISOString()}`;
          printListing(
            ['order_id', 'amount', 'currency', 'order', 'payment', 'created', 'order_reference'],
            shown.map((c) => [c.partnerOrderId, c.amount, c.currency, c.orderStatus, c.paymentStatus, c.createdAt, c.orderReference]),
            page.cursor === undefined
              ? `No ${opts.cursor === undefined ? '' : 'more '}collections ${statuses ? `match ${statuses}, ` : ''}${range}${opts.cursor === undefined ? '' : ' after this --cursor'}.`
              : // A page stops after a month of days with nothing on them; the cursor reads on from there.
                `None of the days this page read holds a collection ${statuses ? `matching ${statuses} ` : ''}${range}; older days: --cursor ${page.cursor}`,
          );
          if (shown.length === 0) return;
          printLine(
            page.cursor === undefined
              ? `${shown.length} collection(s) created between ${since.toISOString()} and ${until.toISOString()}`
              : `${shown.length} collection(s) on this page; next page: --cursor ${page.cursor}`,
          );
        });
      },
    );
}

/** `payrelay collections create|status|list`. */
export function registerCollectionsCommands(program: Command): void {
  const collections = withExample(
    program
      .command('collections')
      .description('collection orders: money customers pay in through the payout service, followed through its order notifications'),
    'payrelay collections create --amount 40 --currency GHS',
    'payrelay collections list --payment-status PAID',
  );
  registerCreate(collections);
  registerStatusAndList(collections);
}
