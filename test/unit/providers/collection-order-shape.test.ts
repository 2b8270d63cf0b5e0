import { describe, expect, it } from 'vitest';
import { ConfigError } from '@shared/config/env';
import { DEFAULT_COLLECTION_ORDER_PATH, collectionOrderBody } from '@shared/providers/collection-order-shape';
import { cliProviderSettings } from '@cli/settings';

const values = {
  orderId: 'col-1',
  amount: '40.00',
  currency: 'GHS',
  timestamp: '2026-11-23T10:00:00.000Z',
  epochSeconds: '1795428000',
  partnerId: 'PTN-1',
  merchantId: 'MER-1',
};

/* The shape as the CLI reads it from the shell's environment (COLLECTION_ORDER_PATH, COLLECTION_ORDER_BODY). */
const shapeOf = (env: Record<string, string>) => {
  const settings = cliProviderSettings(env);
  return { path: settings.COLLECTION_ORDER_PATH, fields: settings.COLLECTION_ORDER_BODY };
};

describe('collection-order shape (COLLECTION_ORDER_PATH, COLLECTION_ORDER_BODY)', () => {
  it('defaults to the public shape: partner_order_id, amount_to_collect, timestamp, in that order', () => {
    const shape = shapeOf({});
    expect(shape.path).toBe(DEFAULT_COLLECTION_ORDER_PATH);
    expect(Object.entries(collectionOrderBody(shape, values))).toEqual([
      ['partner_order_id', 'col-1'],
      ['amount_to_collect', '40.00'],
      ['timestamp', '2026-11-23T10:00:00.000Z'],
    ]);
  });

  it('takes another path and another body, kept in the order written', () => {
    const shape = shapeOf({
      COLLECTION_ORDER_PATH: '/api/v1/no-auth/PartnerP2P/CreateOrder',
      COLLECTION_ORDER_BODY: '{"order_id":"orderId","amount":"amount","currency":"currency","merchant":"merchantId","ts":"epochSeconds"}',
    });
    expect(shape.path).toBe('/api/v1/no-auth/PartnerP2P/CreateOrder');
    expect(collectionOrderBody(shape, values)).toEqual({ order_id: 'col-1', amount: '40.00', currency: 'GHS', merchant: 'MER-1', ts: '1795428000' });
    expect(Object.keys(collectionOrderBody(shape, values))).toEqual(['order_id', 'amount', 'currency', 'merchant', 'ts']);
  });

  it.each([
    [{ COLLECTION_ORDER_PATH: 'api/no-slash' }, 'COLLECTION_ORDER_PATH: "api/no-slash" must start with / and hold only URL path characters'],
    [{ COLLECTION_ORDER_BODY: '{not json' }, "COLLECTION_ORDER_BODY: is not valid JSON: Expected property name or '}' in JSON at position 1"],
    [{ COLLECTION_ORDER_BODY: '["orderId"]' }, 'COLLECTION_ORDER_BODY: must be a JSON object of provider field name to value name'],
    [{ COLLECTION_ORDER_BODY: '{"partner_order_id":"orderId","amount":"price"}' }, 'COLLECTION_ORDER_BODY: maps amount to "price"; allowed values: orderId, amount, '],
    [{ COLLECTION_ORDER_BODY: '{"partner_order_id":"orderId"}' }, 'COLLECTION_ORDER_BODY: must send orderId and amount'],
    [{ COLLECTION_ORDER_BODY: '{"partner_order_id":"orderId","amount":"amount","signature":"orderId"}' }, 'COLLECTION_ORDER_BODY: cannot name the field "signature"'],
    [{ COLLECTION_ORDER_BODY: ' ' }, 'COLLECTION_ORDER_BODY: is empty: unset it to use the default (partner_order_id, amount_to_collect, timestamp), or give a value'],
    [{ COLLECTION_ORDER_PATH: '' }, 'COLLECTION_ORDER_PATH: is empty: unset it to use the default (/api/v1/no-auth/PartnerP2P/CollectionOrder), or give a value'],
  ])('refuses %j, naming the setting once', (env, words) => {
    expect(() => shapeOf(env)).toThrow(ConfigError);
    expect(() => shapeOf(env)).toThrow(`invalid configuration: ${words}`);
  });
});
