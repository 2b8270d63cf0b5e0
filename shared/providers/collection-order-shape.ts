import { SettingError } from '@shared/domain/errors';
import { parseJsonObject } from '@shared/domain/json-object';

/**
 * The collection-order request as the provider wants it. The provider's documentation shows neither the path nor the
 * body, so both are settings: COLLECTION_ORDER_PATH and COLLECTION_ORDER_BODY. The body setting maps
 * each field the provider expects to one value payrelay knows; fields are sent in the order given,
 * which matters for a profile that signs in insertion order.
 */

/** The values a collection-order body can carry. */
export const COLLECTION_VALUES = ['orderId', 'amount', 'currency', 'timestamp', 'epochSeconds', 'partnerId', 'merchantId'] as const;
export type CollectionValue = (typeof COLLECTION_VALUES)[number];

export interface CollectionOrderShape {
  /** Path relative to the payout service base URL, starting with `/`. */
  path: string;
  /** Provider field name -> payrelay value, in sending order. */
  fields: ReadonlyArray<readonly [string, CollectionValue]>;
}

/** The path the public pages suggest (an assumption: the provider's documentation shows none). */
export const DEFAULT_COLLECTION_ORDER_PATH = '/api/v1/no-auth/PartnerP2P/CollectionOrder';

/** The public shape: the partner's order id, the amount to collect and a timestamp. */
export const DEFAULT_COLLECTION_ORDER_FIELDS: CollectionOrderShape['fields'] = [
  ['partner_order_id', 'orderId'],
  ['amount_to_collect', 'amount'],
  ['timestamp', 'timestamp'],
];

/** COLLECTION_ORDER_PATH or COLLECTION_ORDER_BODY is not usable; the message says why, without naming the setting (SettingError). */
export class CollectionOrderShapeError extends SettingError {
  override name = 'CollectionOrderShapeError';
}

/**
 * Reads COLLECTION_ORDER_PATH. Undefined gives the default path.
 * @throws CollectionOrderShapeError when it is not a URL path
 */
export function parseCollectionOrderPath(path: string | undefined): string {
  const chosenPath = path?.trim() || DEFAULT_COLLECTION_ORDER_PATH;
  if (!/^\/[A-Za-z0-9/_.~-]*$/.test(chosenPath)) {
    throw new CollectionOrderShapeError(`${JSON.stringify(chosenPath)} must start with / and hold only URL path characters`);
  }
  return chosenPath;
}

/**
 * Reads COLLECTION_ORDER_BODY (a JSON object such as
 * `{"partner_order_id":"orderId","amount_to_collect":"amount","currency":"currency","timestamp":"epochSeconds"}`).
 * Undefined gives the default fields.
 * @throws CollectionOrderShapeError naming the offending field
 */
export function parseCollectionOrderBody(bodyJson: string | undefined): CollectionOrderShape['fields'] {
  if (bodyJson === undefined || bodyJson.trim() === '') return DEFAULT_COLLECTION_ORDER_FIELDS;
  const raw = parseJsonObject(bodyJson, {
    notJson: (reason) => new CollectionOrderShapeError(reason),
    notObject: () => new CollectionOrderShapeError('must be a JSON object of provider field name to value name'),
  });
  const fields: Array<readonly [string, CollectionValue]> = [];
  for (const [field, value] of Object.entries(raw)) {
    if (field === 'signature' || field.trim() === '') {
      throw new CollectionOrderShapeError(`cannot name the field ${JSON.stringify(field)} (signature is added when signing)`);
    }
    if (typeof value !== 'string' || !(COLLECTION_VALUES as readonly string[]).includes(value)) {
      throw new CollectionOrderShapeError(`maps ${field} to ${JSON.stringify(value)}; allowed values: ${COLLECTION_VALUES.join(', ')}`);
    }
    fields.push([field, value as CollectionValue]);
  }
  if (!fields.some(([, value]) => value === 'orderId') || !fields.some(([, value]) => value === 'amount')) {
    throw new CollectionOrderShapeError('must send orderId and amount (the order id and the amount to collect)');
  }
  return fields;
}

/** The values of one collection order, by name. */
export type CollectionValues = Readonly<Record<CollectionValue, string>>;

/** The request body for one order, fields in the shape's order (the signature is added by the caller). */
export function collectionOrderBody(shape: CollectionOrderShape, values: CollectionValues): Record<string, string> {
  return Object.fromEntries(shape.fields.map(([field, value]) => [field, values[value]]));
}
