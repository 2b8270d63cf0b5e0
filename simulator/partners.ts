import type { SimLogger } from './logger';
import type { Outbox, PartnerCredentials } from './outbox';
import { randomDigits, randomHex, type Random } from './prng';
import { payoutRefusal as refuse, type Reply } from './refusals';
import { requireStrings } from './request-body';

/** A partner of the payout service: its keys, its merchants and where its notifications go. */
export interface Partner {
  partner_code: string;
  email: string;
  partner_id: string;
  publicKey: string;
  secretKey: string;
  /** platform_merchant_id -> merchant secret; the first one is the partner's default merchant. */
  merchants: Map<string, string>;
  notificationUrl?: string;
}

/**
 * The payout service's partners and their keys: onboarding, key resets, the one-time links that
 * hand keys out (as the real service e-mails them), and the URL each partner's notifications go to.
 */
export class PartnerRegistry {
  private readonly partners = new Map<string, Partner>();
  private readonly byPublicKey = new Map<string, Partner>();
  private readonly byMerchant = new Map<string, Partner>();
  private readonly oneTimeLinks = new Map<string, PartnerCredentials>();
  private defaultNotificationUrl: string | undefined;

  constructor(private readonly deps: { random: Random; outbox: Outbox; log: SimLogger; baseUrl: () => string }) {}

  /** The partner of a partner_code, if onboarded. */
  get(partnerCode: string): Partner | undefined {
    return this.partners.get(partnerCode);
  }

  /** The partner whose current public key this is (an old key after a reset finds nobody). */
  byKey(publicKey: string): Partner | undefined {
    return this.byPublicKey.get(publicKey);
  }

  private newKey(prefix: string): string {
    return `${prefix}_${randomHex(this.deps.random, 32)}`;
  }

  /** The keys of one merchant of a partner, in the provider secret's shape. */
  credentialsOf(partner: Partner, merchantId: string): PartnerCredentials {
    return {
      partner_public_key: partner.publicKey,
      partner_secret_key: partner.secretKey,
      merchant_secret_key: partner.merchants.get(merchantId) ?? '',
      partner_id: partner.partner_id,
      platform_merchant_id: merchantId,
    };
  }

  /** The partner's first merchant, the one a request that names none acts for. */
  defaultMerchant(partner: Partner): string {
    const first = partner.merchants.keys().next();
    return first.done ? '' : first.value;
  }

  private addMerchant(partner: Partner, merchantId?: string): string {
    const id = merchantId ?? `MER-${randomDigits(this.deps.random, 8)}`;
    const owner = this.byMerchant.get(id);
    if (owner && owner !== partner) throw refuse(409, `platform_merchant_id ${id} belongs to another partner`);
    if (!partner.merchants.has(id)) partner.merchants.set(id, this.newKey('msk'));
    this.byMerchant.set(id, partner);
    return id;
  }

  private mailKeys(partner: Partner, kind: 'partner-onboarded' | 'partner-keys-reset'): void {
    const credentials = this.credentialsOf(partner, this.defaultMerchant(partner));
    const token = randomHex(this.deps.random, 24);
    this.oneTimeLinks.set(token, credentials);
    const link = `${this.deps.baseUrl()}/one-time/${token}`;
    this.deps.outbox.add({ to: partner.email, kind, link, credentials });
    this.deps.log.info(`${kind}: keys written to the outbox`, { partner_code: partner.partner_code, to: partner.email });
  }

  /**
   * Registers a partner (or, for a known partner_code, adds a merchant to it) and returns the
   * credentials of that merchant. Onboarding over HTTP does the same and mails them.
   */
  createPartner(input: { partner_code: string; email: string; platform_merchant_id?: string }): PartnerCredentials {
    let partner = this.partners.get(input.partner_code);
    if (!partner) {
      partner = {
        partner_code: input.partner_code,
        email: input.email,
        partner_id: `PTN-${randomDigits(this.deps.random, 8)}`,
        publicKey: this.newKey('pk'),
        secretKey: this.newKey('sk'),
        merchants: new Map(),
      };
      this.partners.set(partner.partner_code, partner);
      this.byPublicKey.set(partner.publicKey, partner);
    }
    const merchantId = this.addMerchant(partner, input.platform_merchant_id);
    return this.credentialsOf(partner, merchantId);
  }

  /** Issues new public and partner secret keys; the old ones get 401 from now on. partner_id and merchant secrets stay. */
  resetKeys(partnerCode: string): PartnerCredentials {
    const partner = this.partners.get(partnerCode);
    if (!partner) throw refuse(404, `no partner with partner_code ${partnerCode}`);
    this.byPublicKey.delete(partner.publicKey);
    partner.publicKey = this.newKey('pk');
    partner.secretKey = this.newKey('sk');
    this.byPublicKey.set(partner.publicKey, partner);
    this.mailKeys(partner, 'partner-keys-reset');
    return this.credentialsOf(partner, this.defaultMerchant(partner));
  }

  /** Current credentials of every merchant of a partner (what a re-read of the rotated secret would find). */
  credentials(partnerCode: string, merchantId?: string): PartnerCredentials {
    const partner = this.partners.get(partnerCode);
    if (!partner) throw refuse(404, `no partner with partner_code ${partnerCode}`);
    const id = merchantId ?? this.defaultMerchant(partner);
    if (!partner.merchants.has(id)) throw refuse(404, `partner ${partnerCode} has no merchant ${id}`);
    return this.credentialsOf(partner, id);
  }

  onboardPartner(body: Record<string, unknown>): Reply {
    const { partner_code, email } = requireStrings(body, ['partner_code', 'email'], refuse);
    if (this.partners.has(partner_code)) {
      throw refuse(409, `partner_code ${partner_code} is already onboarded; use ResetPartnerKeys for new keys`);
    }
    this.createPartner({ partner_code, email });
    const partner = this.partners.get(partner_code) as Partner;
    this.mailKeys(partner, 'partner-onboarded');
    return {
      status: 200,
      body: { success: true, message: 'Partner onboarded; please check your email for your keys', data: null },
    };
  }

  resetPartnerKeys(body: Record<string, unknown>): Reply {
    const { partner_code, email } = requireStrings(body, ['email', 'partner_code'], refuse);
    const partner = this.partners.get(partner_code);
    if (!partner || partner.email !== email) {
      throw refuse(404, 'no partner with this partner_code and email');
    }
    this.resetKeys(partner_code);
    return {
      status: 200,
      body: { success: true, message: 'Keys reset; please check your email for the one-time link', data: null },
    };
  }

  /** The one-time link: answers the keys once, then 410. */
  readOneTimeLink(token: string): Reply {
    const credentials = this.oneTimeLinks.get(token);
    if (!credentials) throw refuse(410, 'this one-time link was already used or never existed');
    this.oneTimeLinks.delete(token);
    return { status: 200, body: { success: true, message: 'Your keys', data: credentials } };
  }

  setNotificationUrl(url: string, partnerCode?: string): void {
    try {
      new URL(url);
    } catch {
      throw refuse(400, `notification URL "${url.slice(0, 80)}" is not an absolute URL`);
    }
    if (partnerCode === undefined) {
      this.defaultNotificationUrl = url;
      return;
    }
    const partner = this.partners.get(partnerCode);
    if (!partner) throw refuse(404, `no partner with partner_code ${partnerCode}`);
    partner.notificationUrl = url;
  }

  /** Where a partner's order notifications go: its own URL, else the default one, else nowhere. */
  notificationUrlOf(partnerCode: string): string | undefined {
    return this.partners.get(partnerCode)?.notificationUrl ?? this.defaultNotificationUrl;
  }

  /** Forgets every partner, key, one-time link and notification URL. */
  clear(): void {
    for (const map of [this.partners, this.byPublicKey, this.byMerchant, this.oneTimeLinks]) map.clear();
    this.defaultNotificationUrl = undefined;
  }
}
