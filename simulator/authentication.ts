import type { IncomingHttpHeaders } from 'node:http';
import { verifyPayload, type SigningOperation, type SigningProfile } from '@shared/signing';
import type { FaultBook, FaultOperation } from './faults';
import type { SimLogger } from './logger';
import type { Partner, PartnerRegistry } from './partners';
import { payoutRefusal as refuse } from './refusals';

/**
 * How the payout service authenticates a call: the partner public key in `Authorization` (with or
 * without `Bearer`, as the settings require), the body's signature over the partner and merchant
 * secrets, and a merchant that belongs to the partner of the key.
 */
export class PartnerAuthentication {
  constructor(
    private readonly partners: PartnerRegistry,
    private readonly settings: { signingProfile: SigningProfile; bearerPrefixRequired: boolean },
    private readonly deps: { faults: FaultBook; log: SimLogger },
  ) {}

  /** The partner of the presented public key; the keys-reset fault may rotate the keys first, so the call gets 401. */
  authenticate(headers: IncomingHttpHeaders, operation: FaultOperation): Partner {
    const raw = typeof headers.authorization === 'string' ? headers.authorization.trim() : '';
    let key = raw;
    if (/^Bearer\s+/i.test(raw)) key = raw.replace(/^Bearer\s+/i, '');
    else if (this.settings.bearerPrefixRequired && raw !== '') {
      throw refuse(401, 'Authorization must be "Bearer <partner public key>"');
    }
    const presented = this.partners.byKey(key);
    if (presented && this.deps.faults.keysResetDue(operation)) {
      this.deps.log.info('fault: partner keys reset mid-run', { partner_code: presented.partner_code, operation });
      this.partners.resetKeys(presented.partner_code);
    }
    if (raw === '') throw refuse(401, 'missing Authorization header (the partner public key)');
    const partner = this.partners.byKey(key);
    if (!partner) throw refuse(401, 'invalid or expired partner public key');
    return partner;
  }

  checkSignature(partner: Partner, merchantId: string, body: Record<string, unknown>, operation: SigningOperation): void {
    const secrets = { partnerSecret: partner.secretKey, merchantSecret: partner.merchants.get(merchantId) ?? '' };
    if (!verifyPayload(body, operation, secrets, this.settings.signingProfile)) {
      throw refuse(401, 'invalid signature');
    }
  }

  /** The merchant named in the body, which must belong to the authenticated partner and match partner_id. */
  merchantOf(partner: Partner, fields: { partner_id: string; platform_merchant_id: string }): string {
    if (fields.partner_id !== partner.partner_id) throw refuse(403, 'partner_id does not belong to this public key');
    if (!partner.merchants.has(fields.platform_merchant_id)) {
      throw refuse(403, 'platform_merchant_id does not belong to this partner');
    }
    return fields.platform_merchant_id;
  }
}
