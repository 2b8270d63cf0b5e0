import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  InvalidCollectionError,
  applyNotice,
  newCollection,
  normalizeOrderStatus,
  normalizePaymentStatus,
  recordCreation,
  type Collection,
} from '@shared/domain/collection';
import { InvalidAmountError, UnsupportedCurrencyError } from '@shared/domain/money';

const T0 = new Date('2026-11-23T10:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const fresh = (): Collection =>
  newCollection({ partnerOrderId: 'col-1', platformMerchantId: 'MER-1', amount: '40', currency: 'GHS', now: T0 });

describe('newCollection', () => {
  it('starts PENDING / PENDING, requested, version 0, with a canonical amount and one history entry', () => {
    expect(fresh()).toEqual({
      partnerOrderId: 'col-1',
      platformMerchantId: 'MER-1',
      amount: '40.00',
      currency: 'GHS',
      orderStatus: 'PENDING',
      paymentStatus: 'PENDING',
      creation: 'requested',
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      version: 0,
      history: [{ at: T0.toISOString(), orderStatus: 'PENDING', paymentStatus: 'PENDING', cause: 'created' }],
    });
  });

  it.each([
    ['', InvalidCollectionError, /empty/],
    ['x'.repeat(129), InvalidCollectionError, /longer than 128/],
    ['bad\uD800', InvalidCollectionError, /well-formed/],
  ])('refuses the order id %j', (partnerOrderId, type, words) => {
    const make = () => newCollection({ partnerOrderId, platformMerchantId: 'MER-1', amount: '1', currency: 'GHS', now: T0 });
    expect(make).toThrow(type);
    expect(make).toThrow(words);
  });

  it('refuses an amount invalid for its currency and an unknown currency', () => {
    expect(() => newCollection({ partnerOrderId: 'a', platformMerchantId: 'M', amount: '1.234', currency: 'GHS', now: T0 })).toThrow(InvalidAmountError);
    expect(() => newCollection({ partnerOrderId: 'a', platformMerchantId: 'M', amount: '1', currency: 'XXX', now: T0 })).toThrow(UnsupportedCurrencyError);
    expect(() => newCollection({ partnerOrderId: 'a', platformMerchantId: ' ', amount: '1', currency: 'GHS', now: T0 })).toThrow(InvalidCollectionError);
  });
});

describe('status words', () => {
  it('maps the provider words, INITIATED and CANCELLED included, and nothing else', () => {
    expect(normalizeOrderStatus('INITIATED')).toBe('PENDING');
    expect(normalizeOrderStatus('cancelled')).toBe('CANCELED');
    expect(normalizeOrderStatus(' COMPLETED ')).toBe('COMPLETED');
    expect(normalizeOrderStatus('PAID')).toBeUndefined();
    expect(normalizePaymentStatus('REFUNDED')).toBe('REFUND');
    expect(normalizePaymentStatus('COMPLETED')).toBeUndefined();
    expect(normalizePaymentStatus(undefined)).toBeUndefined();
  });
});

describe('recordCreation', () => {
  it('keeps the order reference and only the masked virtual account number', () => {
    const next = recordCreation(
      fresh(),
      { kind: 'accepted', orderReference: 'ORD-1', virtualAccount: { bankName: 'Bank', accountName: 'Shop', accountNumber: '1234567890' } },
      later(1),
    );
    expect(next).toMatchObject({ creation: 'accepted', orderReference: 'ORD-1', orderStatus: 'PENDING' });
    expect(next.virtualAccount).toEqual({ bankName: 'Bank', accountName: 'Shop', accountNumberMasked: '******7890' });
    expect(JSON.stringify(next)).not.toContain('1234567890');
    expect(next.history.at(-1)?.cause).toBe('provider accepted');
  });

  it('fails the order on a refusal, and leaves it PENDING on an unclear answer', () => {
    expect(recordCreation(fresh(), { kind: 'refused', reason: 'amount too small' }, later(1))).toMatchObject({
      creation: 'refused',
      orderStatus: 'FAILED',
    });
    expect(recordCreation(fresh(), { kind: 'unknown', reason: 'time-out' }, later(1))).toMatchObject({ creation: 'unknown', orderStatus: 'PENDING' });
  });

  it('never undoes a notification that arrived before the answer', () => {
    const paid = applyNotice(fresh(), { orderStatus: 'COMPLETED', paymentStatus: 'PAID', eventId: 'e1' }, later(1)).next as Collection;
    expect(recordCreation(paid, { kind: 'refused', reason: 'late refusal' }, later(2))).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID' });
  });
});

describe('applyNotice', () => {
  it('moves order PENDING -> COMPLETED and payment PENDING -> PAID -> REFUND, with history naming the event', () => {
    const paid = applyNotice(fresh(), { orderStatus: 'COMPLETED', paymentStatus: 'PAID', orderReference: 'ORD-9', eventId: 'e1' }, later(1));
    expect(paid.ignored).toEqual([]);
    expect(paid.next).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID', orderReference: 'ORD-9' });
    expect(paid.next?.history.at(-1)).toEqual({ at: later(1).toISOString(), orderStatus: 'COMPLETED', paymentStatus: 'PAID', cause: 'notification', eventId: 'e1' });
    const refunded = applyNotice(paid.next as Collection, { orderStatus: 'COMPLETED', paymentStatus: 'REFUND', eventId: 'e2' }, later(2));
    expect(refunded.next).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'REFUND' });
  });

  it('ignores stale and unknown words, in words, and changes nothing', () => {
    const paid = applyNotice(fresh(), { orderStatus: 'COMPLETED', paymentStatus: 'PAID', eventId: 'e1' }, later(1)).next as Collection;
    const stale = applyNotice(paid, { orderStatus: 'PENDING', paymentStatus: 'PENDING', eventId: 'e0' }, later(2));
    expect(stale.next).toBeUndefined();
    expect(stale.ignored).toEqual(['order status PENDING after COMPLETED (stale)', 'payment status PENDING after PAID (stale)']);
    expect(applyNotice(paid, { orderStatus: 'SHIPPED', paymentStatus: 'MAYBE', eventId: 'e4' }, later(4)).ignored).toEqual([
      'unknown order status SHIPPED',
      'unknown payment status MAYBE',
    ]);
  });

  it('keeps the first final order status and records a contradicting one once, with a note for a person', () => {
    const paid = applyNotice(fresh(), { orderStatus: 'COMPLETED', paymentStatus: 'PAID', eventId: 'e1' }, later(1)).next as Collection;
    const contradicting = applyNotice(paid, { orderStatus: 'EXPIRED', eventId: 'e3' }, later(3));
    const note = 'order status EXPIRED contradicts the final COMPLETED: COMPLETED stays until a person settles it with the provider';
    expect(contradicting).toMatchObject({ ignored: [], contradiction: note, contradicts: true });
    expect(contradicting.next).toMatchObject({ orderStatus: 'COMPLETED', paymentStatus: 'PAID', contradictedBy: ['EXPIRED'], version: paid.version });
    expect(contradicting.next?.history.at(-1)).toEqual({ at: later(3).toISOString(), orderStatus: 'COMPLETED', paymentStatus: 'PAID', cause: 'notification', eventId: 'e3', note });
    const flagged = contradicting.next as Collection;
    // The same word again (a redelivery, a replay) is already recorded: nothing to write, but it still contradicts.
    expect(applyNotice(flagged, { orderStatus: 'EXPIRED', eventId: 'e5' }, later(5))).toEqual({ ignored: [], contradicts: true });
    expect(applyNotice(flagged, { orderStatus: 'CANCELLED', eventId: 'e6' }, later(6)).next?.contradictedBy).toEqual(['CANCELED', 'EXPIRED']);
  });

  it('a repeated notice changes nothing the second time', () => {
    const notice = { orderStatus: 'EXPIRED', paymentStatus: 'PENDING', eventId: 'e1' };
    const once = applyNotice(fresh(), notice, later(1)).next as Collection;
    expect(applyNotice(once, notice, later(2))).toEqual({ ignored: [] });
  });

  it('property: in any delivery order, the result is the first final order status, every other final one recorded, and the highest payment status', () => {
    const orderWord = fc.constantFrom('PENDING', 'INITIATED', 'COMPLETED', 'EXPIRED', 'CANCELED', 'FAILED');
    const paymentWord = fc.constantFrom('PENDING', 'PAID', 'REFUND');
    const notice = fc.record({ orderStatus: fc.option(orderWord, { nil: undefined }), paymentStatus: fc.option(paymentWord, { nil: undefined }) });
    fc.assert(
      fc.property(fc.array(notice, { maxLength: 8 }), (notices) => {
        let current = fresh();
        notices.forEach((n, i) => {
          current = applyNotice(current, { ...n, eventId: `e${i}` }, later(i + 1)).next ?? current;
        });
        const firstFinal = notices.map((n) => normalizeOrderStatus(n.orderStatus)).find((s) => s !== undefined && s !== 'PENDING') ?? 'PENDING';
        const rank = { PENDING: 0, PAID: 1, REFUND: 2 } as const;
        const highest = notices.reduce<'PENDING' | 'PAID' | 'REFUND'>(
          (best, n) => (n.paymentStatus && rank[n.paymentStatus] > rank[best] ? n.paymentStatus : best),
          'PENDING',
        );
        expect(current.orderStatus).toBe(firstFinal);
        expect(current.paymentStatus).toBe(highest);
        // Whichever came first, every final order word seen is on the item: the status or a contradiction.
        const finals = new Set(notices.map((n) => normalizeOrderStatus(n.orderStatus)).filter((s) => s !== undefined && s !== 'PENDING'));
        expect(new Set([...(current.orderStatus === 'PENDING' ? [] : [current.orderStatus]), ...(current.contradictedBy ?? [])])).toEqual(finals);
        expect(current.contradictedBy ?? []).not.toContain(current.orderStatus);
        expect(current.history.length).toBeLessThanOrEqual(1 + notices.length);
      }),
    );
  });
});
