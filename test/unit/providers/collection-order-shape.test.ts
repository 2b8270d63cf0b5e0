import { describe, expect, it } from 'vitest';
import {
  CollectionOrderShapeError,
  DEFAULT_COLLECTION_ORDER_PATH,
  collectionOrderBody,
  parseCollectionOrderShape,
} from '@shared/providers/collection-order-shape';

const values = {
  orderId: 'col-1',
  amount: '40.00',
  currency: 'GHS',
  timestamp: '2026-11-23T10:00:00.000Z',
  epochSeconds: '1795428000',
  partnerId: 'PTN-1',
  merchantId: 'MER-1',
};

describe('collection-order shape (COLLECTION_ORDER_PATH, COLLECTION_ORDER_BODY)', () => {
  it('defaults to the public shape: partner_order_id, amount_to_collect, timestamp, in that order', () => {
    const shape = parseCollectionOrderShape(undefined, '');
    expect(shape.path).toBe(DEFAULT_COLLECTION_ORDER_PATH);
    expect(Object.entries(collectionOrderBody(shape, values))).toEqual([
      ['partner_order_id', 'col-1'],
      ['amount_to_collect', '40.00'],
      ['timestamp', '2026-11-23T10:00:00.000Z'],
    ]);
  });

  it('takes another path and another body, kept in the order written', () => {
    const shape = parseCollectionOrderShape(
      '/api/v1/no-auth/PartnerP2P/CreateOrder',
      '{"order_id":"orderId","amount":"amount","currency":"currency","merchant":"merchantId","ts":"epochSeconds"}',
    );
    expect(shape.path).toBe('/api/v1/no-auth/PartnerP2P/CreateOrder');
    expect(collectionOrderBody(shape, values)).toEqual({ order_id: 'col-1', amount: '40.00', currency: 'GHS', merchant: 'MER-1', ts: '1795428000' });
    expect(Object.keys(collectionOrderBody(shape, values))).toEqual(['order_id', 'amount', 'currency', 'merchant', 'ts']);
  });

  it.each([
    ['api/no-slash', undefined, /COLLECTION_ORDER_PATH .* must start with \//],
    ['/ok', '{not json', /COLLECTION_ORDER_BODY is not valid JSON/],
    ['/ok', '["orderId"]', /must be a JSON object/],
    ['/ok', '{"partner_order_id":"orderId","amount":"price"}', /maps amount to "price"; allowed values: orderId, amount/],
    ['/ok', '{"partner_order_id":"orderId"}', /must send orderId and amount/],
    ['/ok', '{"partner_order_id":"orderId","amount":"amount","signature":"orderId"}', /cannot name the field "signature"/],
  ])('refuses path %j with body %j, naming the problem', (path, body, words) => {
    expect(() => parseCollectionOrderShape(path, body)).toThrow(CollectionOrderShapeError);
    expect(() => parseCollectionOrderShape(path, body)).toThrow(words);
  });
});
