import type { PayoutIdentity } from '@shared/domain/identity';
import { withSignature, type SigningProfile } from '@shared/signing';
import type { CollectionOrders } from './collection-orders';
import type { FaultBook } from './faults';
import type { Delivery, Outgoing } from './outgoing';
import type { Partner, PartnerRegistry } from './partners';
import type { PayoutRecord, PayoutState } from './payout-record';
import { payoutRefusal as refuse } from './refusals';

/** Arguments of `sendOrderNotification`: a payout (by identity) or a collection order. */
export interface OrderNotificationRequest {
  platform_merchant_id?: string;
  currency?: string;
  withdrawal_reference?: string;
  order_reference?: string;
  /** Overrides the order status (PENDING, COMPLETED, EXPIRED, CANCELED, INITIATED, FAILED). */
  order_status?: string;
  /** Overrides the payment status (PENDING, PAID, REFUND). */
  payment_status?: string;
}

/**
 * The payout service's order notifications: signed posts to the partner's notification URL, for a
 * payout (when it settles or is reversed, or on the admin's request) and for a collection order.
 */
export class OrderNotifications {
  constructor(
    private readonly partners: PartnerRegistry,
    private readonly orders: CollectionOrders,
    private readonly payoutOf: (identity: PayoutIdentity) => PayoutRecord | undefined,
    private readonly settings: { signingProfile: SigningProfile },
    private readonly deps: { faults: FaultBook; outgoing: Outgoing },
  ) {}

  /** Whether the partner has somewhere to send notifications to. */
  canNotify(partnerCode: string): boolean {
    return this.partners.notificationUrlOf(partnerCode) !== undefined;
  }

  private async post(partnerCode: string, merchantId: string, data: Record<string, unknown>[]): Promise<Delivery[]> {
    const partner = this.partners.get(partnerCode) as Partner;
    const url = this.partners.notificationUrlOf(partnerCode);
    if (!url) throw refuse(409, 'no notification URL registered (admin setNotificationUrl)');
    const secrets = { partnerSecret: partner.secretKey, merchantSecret: partner.merchants.get(merchantId) ?? '' };
    const bodies = data.map((d) =>
      withSignature({ status: 'success', message: 'Order notification', data: d }, 'orderNotification', secrets, this.settings.signingProfile),
    );
    return this.deps.outgoing.send('orderNotification', url, bodies, { authorization: partner.publicKey });
  }

  private payoutNotificationData(record: PayoutRecord, state: PayoutState, override: OrderNotificationRequest): Record<string, unknown> {
    const orderStatus = state === 'pending' ? 'PENDING' : state === 'succeeded' || state === 'reversed' ? 'COMPLETED' : 'FAILED';
    const paymentStatus = state === 'pending' ? 'PENDING' : state === 'succeeded' ? 'PAID' : 'REFUND';
    return {
      withdrawal_reference: record.identity.withdrawal_reference,
      platform_merchant_id: record.identity.platform_merchant_id,
      currency: record.identity.currency,
      payment: { status: override.payment_status ?? paymentStatus },
      virtual_account: {
        amount: record.amount,
        account_name: record.account_name,
        bank_name: record.account_code,
        account_number: record.account_number,
      },
      order_details: {
        status: override.order_status ?? orderStatus,
        partner_order_id: record.identity.withdrawal_reference,
        order_reference: `PAYOUT-${record.identity.withdrawal_reference}`,
        amount: record.amount,
        currency: record.identity.currency,
      },
    };
  }

  /** Posts the notification of a payout; with the out-of-order fault a stale PENDING one follows the final one. */
  notifyPayout(record: PayoutRecord, override: OrderNotificationRequest, onSettle: boolean): Promise<Delivery[]> {
    const batch = [this.payoutNotificationData(record, record.state, override)];
    if (onSettle && this.deps.faults.roll('orderNotification', 'outOfOrder', this.deps.faults.get('orderNotification').outOfOrderRate)) {
      batch.push(this.payoutNotificationData(record, 'pending', {}));
    }
    return this.post(record.partner_code, record.identity.platform_merchant_id, batch);
  }

  /** Admin: posts a signed order notification for a payout (by identity) or a collection order (by order_reference). */
  async send(request: OrderNotificationRequest): Promise<Delivery[]> {
    if (request.order_reference) {
      const order = this.orders.get(request.order_reference);
      if (!order) throw refuse(404, `no collection order ${request.order_reference}`);
      order.status = request.order_status ?? 'COMPLETED';
      order.payment_status = request.payment_status ?? 'PAID';
      return this.post(order.partner_code, order.platform_merchant_id, [
        {
          payment: { status: order.payment_status },
          virtual_account: order.virtual_account,
          order_details: {
            status: order.status,
            partner_order_id: order.partner_order_id,
            order_reference: order.order_reference,
            amount: order.amount,
            currency: order.currency,
          },
        },
      ]);
    }
    const { platform_merchant_id, currency, withdrawal_reference } = request;
    if (!platform_merchant_id || !currency || !withdrawal_reference) {
      throw refuse(400, 'give order_reference, or platform_merchant_id + currency + withdrawal_reference');
    }
    const record = this.payoutOf({ platform_merchant_id, currency, withdrawal_reference });
    if (!record) throw refuse(404, 'no payout with this identity');
    return this.notifyPayout(record, request, false);
  }
}
