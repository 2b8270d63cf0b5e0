import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCollectionRepository } from '@shared/adapters/collection-repository';
import { createEventStore } from '@shared/adapters/event-store';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import {
  applyCollectionNotice,
  CollectionExistsError,
  CollectionQueryError,
  createCollection,
  getCollection,
  listCollections,
  type CreateCollectionDeps,
} from '@shared/app/collections';
import { replayEvents } from '@shared/app/replay-events';
import { InvalidListCursorError } from '@shared/domain/errors';
import { InvalidCollectionError, newCollection } from '@shared/domain/collection';
import { InvalidAmountError } from '@shared/domain/money';
import { credentialsFromSecret, PayoutServiceClient } from '@shared/providers/payout-client';
import { ProviderUnavailableError } from '@shared/providers/provider-errors';
import type { CollectionStore } from '@shared/ports/collections';
import { startReceiverStack, type ReceiverStack } from '../webhooks/receiver-stack';
import { silentLog } from '@test/factories/ports';

let stack: ReceiverStack;
let client: PayoutServiceClient;
let collections: CollectionStore;
let deps: CreateCollectionDeps;
const clock = { now: () => new Date() };

beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'collect', simulator: { notifyOnSettle: false } });
  client = new PayoutServiceClient({ baseUrl: stack.sim.payoutBaseUrl, timeoutMs: 2000 });
  collections = createCollectionRepository({ tableName: stack.local.names.collectionsTable, client: stack.doc });
  deps = { collections, provider: client, credentials: { get: async () => credentialsFromSecret(stack.partner) }, clock, log: silentLog };
});

afterAll(async () => {
  client?.close();
  await stack?.stop();
});

/** The simulator's order reference of a collection, as it answered the creation. */
/** The simulator's notification, answered 200 by the receiver, then applied by the callback applier (as it is right after the 200). */
async function notify(request: Parameters<ReceiverStack['sim']['admin']['sendOrderNotification']>[0]) {
  const deliveries = await stack.sim.admin.sendOrderNotification(request);
  await stack.applyNow();
  return deliveries;
}

const orderReferenceOf = async (id: string) => (await getCollection(deps, id)).orderReference as string;

describe('collections: create through the simulator, follow the order notifications through the receiver', () => {
  it('creates an order, keeps the masked virtual account, and moves PENDING -> COMPLETED/PAID -> REFUND, forward only', async () => {
    const created = await createCollection(deps, { partnerOrderId: 'col-paid', amount: '40', currency: 'GHS' });
    expect(created.collection).toMatchObject({
      partnerOrderId: 'col-paid',
      platformMerchantId: stack.partner.platform_merchant_id,
      amount: '40.00',
      creation: 'accepted',
      orderStatus: 'PENDING',
      paymentStatus: 'PENDING',
      orderReference: expect.stringMatching(/^ORD-/),
      virtualAccount: { bankName: 'Simulated Bank', accountNumberMasked: expect.stringMatching(/^\*+\d{4}$/) },
    });
    // The full account number is shown to the creator once and never stored.
    expect(created.virtualAccountNumber).toMatch(/^\d{10}$/);
    const stored = await stack.scan(stack.local.names.collectionsTable);
    expect(JSON.stringify(stored)).not.toContain(created.virtualAccountNumber);
    const order = stack.sim.admin.collectionOrders().find((o) => o.partner_order_id === 'col-paid');
    expect(order).toMatchObject({ amount: '40.00', currency: 'GHS', status: 'PENDING' });

    const reference = await orderReferenceOf('col-paid');
    const [paid] = await notify({ order_reference: reference });
    expect(paid?.status).toBe(200);
    expect(await getCollection(deps, 'col-paid')).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID' });

    // A stale PENDING after PAID changes nothing; a REFUND moves the payment on.
    await notify({ order_reference: reference, order_status: 'PENDING', payment_status: 'PENDING' });
    expect(await getCollection(deps, 'col-paid')).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID' });
    await notify({ order_reference: reference, order_status: 'COMPLETED', payment_status: 'REFUND' });
    const refunded = await getCollection(deps, 'col-paid');
    expect(refunded).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'REFUND' });
    expect(refunded.history.map((h) => `${h.cause}:${h.orderStatus}/${h.paymentStatus}`)).toEqual([
      'created:PENDING/PENDING',
      'provider accepted:PENDING/PENDING',
      'notification:COMPLETED/PAID',
      'notification:COMPLETED/REFUND',
    ]);
    // Each notification is stored once, verbatim, as any order notification.
    const events = (await stack.scan(stack.local.names.eventsTable)).filter((e) => String(e.body).includes('col-paid'));
    expect(events).toHaveLength(3);
  });

  it('an expired order stays EXPIRED when a contradicting COMPLETED follows, which is recorded once and counted for a person to settle', async () => {
    await createCollection(deps, { partnerOrderId: 'col-expired', amount: '5.5', currency: 'GHS' });
    const reference = await orderReferenceOf('col-expired');
    await notify({ order_reference: reference, order_status: 'EXPIRED', payment_status: 'PENDING' });
    await notify({ order_reference: reference, order_status: 'COMPLETED', payment_status: 'PAID' });
    const contradicted = await getCollection(deps, 'col-expired');
    expect(contradicted).toMatchObject({ orderStatus: 'EXPIRED', paymentStatus: 'PAID', contradictedBy: ['COMPLETED'] });
    expect(contradicted.history.at(-1)?.note).toBe('order status COMPLETED contradicts the final EXPIRED: EXPIRED stays until a person settles it with the provider');
    // Applied again (a replay, or a retry after a write whose answer was lost): already recorded, so no
    // second write, but counted again: a write that landed unseen must not leave the alarm silent.
    const counted: string[] = [];
    const telemetry = { count: (name: string) => void counted.push(name), seconds: () => {} };
    const again = await applyCollectionNotice({ collections, clock, log: silentLog, telemetry }, 'col-expired', { orderStatus: 'COMPLETED', eventId: 'again' });
    expect(again).toBe('unchanged');
    expect(counted).toEqual(['CollectionStatusContradicted']);
    expect(await applyCollectionNotice({ collections, clock, log: silentLog, telemetry }, 'col-expired', { orderStatus: 'FAILED', eventId: 'other' })).toBe('applied');
    expect(counted).toEqual(['CollectionStatusContradicted', 'CollectionStatusContradicted']);
    expect((await getCollection(deps, 'col-expired')).contradictedBy).toEqual(['COMPLETED', 'FAILED']);
  });

  it('refuses bad input and a reused order id, storing nothing new', async () => {
    await expect(createCollection(deps, { partnerOrderId: 'col-bad', amount: '1.234', currency: 'GHS' })).rejects.toBeInstanceOf(InvalidAmountError);
    expect(await collections.get('col-bad')).toBeUndefined();
    await expect(createCollection(deps, { partnerOrderId: 'col-paid', amount: '41', currency: 'GHS' })).rejects.toThrow(CollectionExistsError);
    await expect(createCollection(deps, { partnerOrderId: 'col-paid', amount: '40', currency: 'GHS' })).rejects.toThrow(/exists already .* choose another order id/);
    // An empty order id names no collection: bad input, not a store error about an empty key.
    await expect(getCollection(deps, ' ')).rejects.toThrow(new InvalidCollectionError('the order id (partner_order_id) is empty'));
    // One longer than any order id: bad input, not DynamoDB's "Size of hashkey has exceeded" (its key limit is 2,048 bytes).
    await expect(getCollection(deps, 'c'.repeat(3000))).rejects.toThrow(new InvalidCollectionError('the order id is longer than 128 characters, so no collection has it'));
  });

  it('an unclear answer leaves the order PENDING (creation unknown); running it again proves it exists', async () => {
    stack.sim.admin.setFaults('collectionOrder', { timeoutRate: 1 });
    try {
      const unclear = await createCollection(
        { ...deps, provider: new PayoutServiceClient({ baseUrl: stack.sim.payoutBaseUrl, timeoutMs: 300 }) },
        { partnerOrderId: 'col-unclear', amount: '9', currency: 'GHS' },
      );
      expect(unclear.collection).toMatchObject({ creation: 'unknown', orderStatus: 'PENDING' });
    } finally {
      stack.sim.admin.clearFaults();
    }
    // The time-out fault commits the order and never answers: it exists at the provider.
    const order = stack.sim.admin.collectionOrders().find((o) => o.partner_order_id === 'col-unclear');
    expect(order).toBeDefined();
    // Sent again, the provider refuses the duplicate: proof it exists, so the order is not failed.
    const again = await createCollection(deps, { partnerOrderId: 'col-unclear', amount: '9', currency: 'GHS' });
    expect(again.collection).toMatchObject({ creation: 'unknown', orderStatus: 'PENDING' });
    // Its notification settles it and brings the provider's reference.
    await notify({ order_reference: order?.order_reference as string });
    expect(await getCollection(deps, 'col-unclear')).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID', orderReference: order?.order_reference });
  });

  it('a definite refusal fails the order; a provider that cannot be reached leaves it requested, and the same command sends it later', async () => {
    stack.sim.admin.setFaults('collectionOrder', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"amount below the minimum"}' }] });
    try {
      const refused = await createCollection(deps, { partnerOrderId: 'col-refused', amount: '3', currency: 'GHS' });
      expect(refused.collection).toMatchObject({ creation: 'refused', orderStatus: 'FAILED', paymentStatus: 'PENDING' });
      expect(refused.collection.history.at(-1)).toMatchObject({ cause: 'provider refused', note: expect.stringContaining('amount below the minimum') });
    } finally {
      stack.sim.admin.clearFaults();
    }

    const closed = new PayoutServiceClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 500 });
    await expect(createCollection({ ...deps, provider: closed }, { partnerOrderId: 'col-offline', amount: '4', currency: 'GHS' })).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );
    closed.close();
    expect(await collections.get('col-offline')).toMatchObject({ creation: 'requested', orderStatus: 'PENDING' });
    const sent = await createCollection(deps, { partnerOrderId: 'col-offline', amount: '4', currency: 'GHS' });
    expect(sent.collection).toMatchObject({ creation: 'accepted', orderReference: expect.stringMatching(/^ORD-/) });
  });

  it('concurrent notifications about one collection race on the conditional write and still end forward-only', async () => {
    await collections.create(
      newCollection({ partnerOrderId: 'col-race', platformMerchantId: stack.partner.platform_merchant_id, amount: '8', currency: 'GHS', now: new Date() }),
    );
    const notices = [
      { orderStatus: 'PENDING', paymentStatus: 'PENDING' },
      { orderStatus: 'COMPLETED', paymentStatus: 'PAID' },
      { orderStatus: 'COMPLETED', paymentStatus: 'REFUND' },
      { orderStatus: 'PENDING', paymentStatus: 'PENDING' },
      { orderStatus: 'COMPLETED', paymentStatus: 'PAID' },
      { paymentStatus: 'PAID' },
    ];
    const results = await Promise.all(
      notices.map((notice, i) => applyCollectionNotice({ collections, clock, log: silentLog, telemetry: { count: () => {}, seconds: () => {} } }, 'col-race', { ...notice, eventId: `race-${i}` })),
    );
    const final = await getCollection(deps, 'col-race');
    expect(final).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'REFUND' });
    // Every write that happened is in the history, and each step moved forward.
    expect(final.history.length).toBe(1 + results.filter((r) => r === 'applied').length);
    expect(final.version).toBe(results.filter((r) => r === 'applied').length);
    const rank = { PENDING: 0, PAID: 1, REFUND: 2 } as const;
    final.history.slice(1).forEach((h, i) => expect(rank[h.paymentStatus]).toBeGreaterThanOrEqual(rank[(final.history[i] as typeof h).paymentStatus]));
  });

  it('replay applies a notification that arrived before its collection was recorded', async () => {
    const since = new Date();
    // The order exists at the provider and its notification is stored, but payrelay has no collection yet.
    const answer = await client.createCollectionOrder({ partnerOrderId: 'col-late', amount: '12', currency: 'GHS', at: new Date() }, credentialsFromSecret(stack.partner));
    await notify({ order_reference: answer.data?.order_reference as string });
    await collections.create(
      newCollection({ partnerOrderId: 'col-late', platformMerchantId: stack.partner.platform_merchant_id, amount: '12', currency: 'GHS', now: new Date() }),
    );
    const replayDeps = {
      events: createEventStore({ tableName: stack.local.names.eventsTable, client: stack.doc }),
      subjects: createKycRepository({ tableName: stack.local.names.kycTable, client: stack.doc }),
      collections,
      clock,
      log: silentLog,
      telemetry: { count: () => {}, seconds: () => {} },
    };
    const first = await replayEvents(replayDeps, { since });
    expect(first).toMatchObject({ scanned: 1, applied: 1 });
    expect(await getCollection(deps, 'col-late')).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID' });
    const second = await replayEvents(replayDeps, { since });
    expect(second).toMatchObject({ applied: 0, unchanged: 1 });
  });

  it('lists newest first, one page at a time, filtered by status, from the index', async () => {
    const since = new Date(Date.now() - 3_600_000);
    const all = await listCollections(deps, { since, limit: 100 });
    const ids = all.collections.map((c) => c.partnerOrderId);
    expect(ids).toEqual(expect.arrayContaining(['col-paid', 'col-expired', 'col-unclear', 'col-refused', 'col-offline', 'col-race', 'col-late']));
    expect([...all.collections].map((c) => c.createdAt)).toEqual([...all.collections].map((c) => c.createdAt).sort().reverse());

    const pages: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listCollections(deps, { since, limit: 1, ...(cursor ? { cursor } : {}) });
      expect(page.collections.length).toBeLessThanOrEqual(1);
      pages.push(...page.collections.map((c) => c.partnerOrderId));
      cursor = page.cursor;
    } while (cursor);
    expect(pages).toEqual(ids);

    const paid = await listCollections(deps, { since, limit: 100, paymentStatus: 'PAID' });
    expect(paid.collections.map((c) => c.partnerOrderId).sort()).toEqual(['col-expired', 'col-late', 'col-unclear']);
    const failed = await listCollections(deps, { since, limit: 100, orderStatus: 'FAILED' });
    expect(failed.collections.map((c) => c.partnerOrderId)).toEqual(['col-refused']);
    await expect(listCollections(deps, { since, limit: 0 })).rejects.toBeInstanceOf(CollectionQueryError);
    await expect(listCollections(deps, { since, limit: 5, cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidListCursorError);
    // A cursor whose resume key is not an index key of its day is refused before DynamoDB sees it
    // (collection-listing.test.ts tries every shape; this cursor's day lies within the range).
    const today = new Date().toISOString().slice(0, 10);
    const inRange = new Date(Date.now() - 60_000).toISOString();
    const forged = Buffer.from(JSON.stringify({ d: today, k: { pk: 'x', createdDay: '2026-11-22', createdAt: inRange } })).toString('base64url');
    await expect(listCollections(deps, { since, limit: 5, cursor: forged })).rejects.toBeInstanceOf(InvalidListCursorError);
    const extra = Buffer.from(JSON.stringify({ d: today, k: { pk: 'x', createdDay: today, createdAt: inRange, other: 1 } })).toString('base64url');
    await expect(listCollections(deps, { since, limit: 5, cursor: extra })).rejects.toBeInstanceOf(InvalidListCursorError);
  });
});
