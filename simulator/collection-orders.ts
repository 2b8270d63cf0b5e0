import type { IncomingHttpHeaders } from 'node:http';
import type { PartnerAuthentication } from './authentication';
import { canonicalAmount } from './payout-fields';
import { randomDigits, type Random } from './prng';
import { payoutRefusal as refuse, type Reply } from './refusals';
import { requireStrings } from './request-body';

/** The currency of a collection order whose body names none (the public shape carries no currency). */
export const COLLECTION_DEFAULT_CURRENCY = 'GHS';

/** A collection order created by a partner. */
export interface CollectionOrder {
  order_reference: string;
  partner_order_id: string;
  partner_code: string;
  platform_merchant_id: string;
  amount: string;
  currency: string;
  status: string;
  payment_status: string;
  virtual_account: { amount: string; account_name: string; bank_name: string; account_number: string };
  created_at: string;
}

/** The payout service's collection orders: a virtual account per order for the payer to pay into. */
export class CollectionOrders {
  private readonly orders = new Map<string, CollectionOrder>();

  constructor(
    private readonly auth: PartnerAuthentication,
    private readonly deps: { random: Random },
  ) {}

  /**
   * Creates a collection order from the public shape: `partner_order_id`, `amount_to_collect` and
   * `timestamp`, signed with the merchant + partner secrets. `currency` (default GHS),
   * `platform_merchant_id` (default: the partner's first merchant) and `partner_id` are optional;
   * when present they must belong to the partner of the public key.
   */
  create(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    const partner = this.auth.authenticate(headers, 'collectionOrder');
    const fields = requireStrings(body, ['partner_order_id', 'amount_to_collect', 'timestamp', 'signature'], refuse);
    const optional = (name: string): string | undefined => (typeof body[name] === 'string' && body[name] !== '' ? (body[name] as string) : undefined);
    const merchantId = this.auth.merchantOf(partner, {
      partner_id: optional('partner_id') ?? partner.partner_id,
      platform_merchant_id: optional('platform_merchant_id') ?? ([...partner.merchants.keys()][0] as string),
    });
    this.auth.checkSignature(partner, merchantId, body, 'collectionOrder');
    if (Number.isNaN(Date.parse(fields.timestamp)) && !/^\d{10,13}$/.test(fields.timestamp)) {
      throw refuse(400, 'timestamp must be an ISO 8601 time or epoch seconds/milliseconds');
    }
    const currency = optional('currency') ?? COLLECTION_DEFAULT_CURRENCY;
    const amount = canonicalAmount(fields.amount_to_collect, currency);
    const duplicate = [...this.orders.values()].some(
      (o) => o.platform_merchant_id === merchantId && o.partner_order_id === fields.partner_order_id,
    );
    if (duplicate) throw refuse(409, `duplicate partner_order_id ${fields.partner_order_id}`);
    const order: CollectionOrder = {
      order_reference: `ORD-${randomDigits(this.deps.random, 10)}`,
      partner_order_id: fields.partner_order_id,
      partner_code: partner.partner_code,
      platform_merchant_id: merchantId,
      amount,
      currency,
      status: 'PENDING',
      payment_status: 'PENDING',
      virtual_account: {
        amount,
        account_name: typeof body.customer_name === 'string' ? body.customer_name : 'Payrelay Collections',
        bank_name: 'Simulated Bank',
        account_number: randomDigits(this.deps.random, 10),
      },
      created_at: new Date().toISOString(),
    };
    this.orders.set(order.order_reference, order);
    const { partner_code: _partner, ...visible } = order;
    return { status: 200, body: { success: true, message: 'Collection order created', data: visible } };
  }

  /** The order of an order_reference (the live record: a notification updates its status). */
  get(orderReference: string): CollectionOrder | undefined {
    return this.orders.get(orderReference);
  }

  /** A copy of every order. */
  list(): CollectionOrder[] {
    return structuredClone([...this.orders.values()]);
  }

  clear(): void {
    this.orders.clear();
  }
}
