import type { IncomingHttpHeaders } from 'node:http';
import { isMobileMoney, maskAccount, parseAccountCode, type AccountCode } from '@shared/domain/account';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { CURRENCIES, parseAmount } from '@shared/domain/money';
import { verifyPayload, withSignature, type SigningOperation, type SigningProfile } from '@shared/signing';
import type { AccountBook } from './accounts';
import type { FaultBook, FaultOperation } from './faults';
import { payoutRefusal, type Reply } from './refusals';
import { requireStrings } from './request-body';
import type { SimLogger } from './logger';
import type { Outbox, PartnerCredentials } from './outbox';
import type { Delivery, Outgoing } from './outgoing';
import { randomDigits, randomHex, type Random } from './prng';

/** What to do with a Payout whose (merchant, currency, withdrawal_reference) was already executed. */
export type DuplicateRule = 'refuse' | 'return-existing';

/** Which payouts settle as FAILED; all others settle as succeeded. */
export interface OutcomeRule {
  /** Account numbers whose payouts fail. */
  failAccountNumbers?: string[];
  /** Canonical amounts (e.g. "13.13") whose payouts fail. */
  failAmounts?: string[];
  /** Probability in [0, 1] that a payout fails, drawn from the seeded PRNG at commit. */
  failProbability?: number;
}

/** When a committed payout leaves PENDING: once both thresholds are reached. */
export interface ProgressionOptions {
  /** Minimum age in ms before it settles (default 0). */
  settleAfterMs?: number;
  /** GetPayout checks that still answer in progress before the one that settles it (default 0). */
  settleAfterChecks?: number;
  outcome?: OutcomeRule;
}

/** The words GetPayout answers with. */
export interface StatusWords {
  pending: 'PENDING' | 'INITIATED';
  success: 'COMPLETED' | 'SUCCESSFUL';
  failure: string;
}

export const DEFAULT_STATUS_WORDS: StatusWords = { pending: 'PENDING', success: 'COMPLETED', failure: 'FAILED' };
const ALTERNATIVE_WORD: Record<string, string> = {
  PENDING: 'INITIATED',
  INITIATED: 'PENDING',
  COMPLETED: 'SUCCESSFUL',
  SUCCESSFUL: 'COMPLETED',
};

/** The documented paths, relative to the payout base URL (which is the simulator's root URL). */
export const PAYOUT_PATHS = {
  onboardPartner: '/api/v1/no-auth/PartnerP2P/OnboardPartner',
  resetPartnerKeys: '/api/v1/no-auth/PartnerP2P/ResetPartnerKeys',
  genKeysForPartner: '/api/v1/no-auth/PartnerP2P/GenKeysForPartner',
  accountVerification: '/api/v1/no-auth/PartnerP2P/AccountVerification',
  payout: '/api/v1/no-auth/PartnerP2P/Payout',
  getPayout: '/api/v1/no-auth/PartnerP2P/GetPayout',
  collectionOrder: '/api/v1/no-auth/PartnerP2P/CollectionOrder',
} as const;

/** Settings of the payout service part of the simulator. */
export interface PayoutServiceSettings {
  signingProfile: SigningProfile;
  duplicateRule: DuplicateRule;
  progression: Required<Omit<ProgressionOptions, 'outcome'>> & { outcome: OutcomeRule };
  statusWords: StatusWords;
  bearerPrefixRequired: boolean;
  /** Post an order notification when a payout settles (if a notification URL is registered). */
  notifyOnSettle: boolean;
}

interface Partner {
  partner_code: string;
  email: string;
  partner_id: string;
  publicKey: string;
  secretKey: string;
  /** platform_merchant_id -> merchant secret; the first one is the partner's default merchant. */
  merchants: Map<string, string>;
  notificationUrl?: string;
}

/** 'reversed': delivered, then the money came back (admin reversePayout). */
type PayoutState = 'pending' | 'succeeded' | 'failed' | 'reversed';

/** GetPayout's word for a payout whose delivered money came back. */
export const REVERSED_WORD = 'REVERSED';

interface PayoutRecord {
  identity: PayoutIdentity;
  partner_code: string;
  amount: string;
  account_number: string;
  account_code: AccountCode;
  account_name: string;
  state: PayoutState;
  outcome: 'succeeded' | 'failed';
  createdMs: number;
  created_at: string;
  updated_at: string;
  checks: number;
  settleAfterMs: number;
  settleAfterChecks: number;
  /** GetPayout has answered with this record at least once (the flap fault forgets only shown payouts). */
  shown: boolean;
}

/** Per payout identity: how often Payout was asked for and how often it actually executed. */
interface LedgerCounts {
  identity: PayoutIdentity;
  calls: number;
  attempts: number;
  executions: number;
  duplicates: number;
}

/** One row of the ledger: the proof of "paid at most once". */
export interface LedgerEntry extends PayoutIdentity {
  /** Payouts committed (money moved) for this identity: must never exceed 1. */
  executions: number;
  /** Every Payout HTTP request that named this identity, whatever happened to it (faults included). */
  calls: number;
  /** Authenticated, signed Payout requests for this identity, including refused ones. */
  attempts: number;
  /** Requests answered by the duplicate rule (refused or answered with the existing payout). */
  duplicates: number;
  /** Current provider status word (PENDING, COMPLETED, FAILED), or NOT_CREATED when never committed. */
  status: string;
  amount?: string;
}

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

const refuse = payoutRefusal;

/** The simulated partner payout and onboarding service. */
export class PayoutService {
  private readonly partners = new Map<string, Partner>();
  private readonly byPublicKey = new Map<string, Partner>();
  private readonly byMerchant = new Map<string, Partner>();
  private readonly payouts = new Map<string, PayoutRecord>();
  private readonly counts = new Map<string, LedgerCounts>();
  private readonly orders = new Map<string, CollectionOrder>();
  private readonly oneTimeLinks = new Map<string, PartnerCredentials>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private defaultNotificationUrl: string | undefined;

  constructor(
    private readonly settings: PayoutServiceSettings,
    private readonly deps: {
      random: Random;
      faults: FaultBook;
      accounts: AccountBook;
      outbox: Outbox;
      outgoing: Outgoing;
      log: SimLogger;
      baseUrl: () => string;
    },
  ) {}

  // ---------- partners and keys ----------

  private newKey(prefix: string): string {
    return `${prefix}_${randomHex(this.deps.random, 32)}`;
  }

  private credentialsOf(partner: Partner, merchantId: string): PartnerCredentials {
    return {
      partner_public_key: partner.publicKey,
      partner_secret_key: partner.secretKey,
      merchant_secret_key: partner.merchants.get(merchantId) ?? '',
      partner_id: partner.partner_id,
      platform_merchant_id: merchantId,
    };
  }

  private defaultMerchant(partner: Partner): string {
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

  // ---------- authentication ----------

  private authenticate(headers: IncomingHttpHeaders, operation: FaultOperation): Partner {
    const raw = typeof headers.authorization === 'string' ? headers.authorization.trim() : '';
    let key = raw;
    if (/^Bearer\s+/i.test(raw)) key = raw.replace(/^Bearer\s+/i, '');
    else if (this.settings.bearerPrefixRequired && raw !== '') {
      throw refuse(401, 'Authorization must be "Bearer <partner public key>"');
    }
    const presented = this.byPublicKey.get(key);
    if (presented && this.deps.faults.keysResetDue(operation)) {
      this.deps.log.info('fault: partner keys reset mid-run', { partner_code: presented.partner_code, operation });
      this.resetKeys(presented.partner_code);
    }
    if (raw === '') throw refuse(401, 'missing Authorization header (the partner public key)');
    const partner = this.byPublicKey.get(key);
    if (!partner) throw refuse(401, 'invalid or expired partner public key');
    return partner;
  }

  private checkSignature(
    partner: Partner,
    merchantId: string,
    body: Record<string, unknown>,
    operation: SigningOperation,
  ): void {
    const secrets = { partnerSecret: partner.secretKey, merchantSecret: partner.merchants.get(merchantId) ?? '' };
    if (!verifyPayload(body, operation, secrets, this.settings.signingProfile)) {
      throw refuse(401, 'invalid signature');
    }
  }

  /** The merchant named in the body, which must belong to the authenticated partner and match partner_id. */
  private merchantOf(partner: Partner, fields: { partner_id: string; platform_merchant_id: string }): string {
    if (fields.partner_id !== partner.partner_id) throw refuse(403, 'partner_id does not belong to this public key');
    if (!partner.merchants.has(fields.platform_merchant_id)) {
      throw refuse(403, 'platform_merchant_id does not belong to this partner');
    }
    return fields.platform_merchant_id;
  }

  private canonicalAmount(amount: string, currency: string): string {
    if (!Object.hasOwn(CURRENCIES, currency)) throw refuse(400, `unsupported currency ${currency.slice(0, 10)}`);
    try {
      return parseAmount(amount, currency);
    } catch {
      throw refuse(400, `amount must be a positive decimal string with at most ${CURRENCIES[currency]?.decimals} decimals for ${currency}`);
    }
  }

  private accountCode(code: string): AccountCode {
    try {
      return parseAccountCode(code);
    } catch {
      throw refuse(400, 'account_code must be a digit bank code or one of Momo, MPESA, MTN, VOD');
    }
  }

  // ---------- account verification ----------

  accountVerification(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    const partner = this.authenticate(headers, 'accountVerification');
    const fields = requireStrings(body, ['account_number', 'account_code', 'currency', 'signature'], refuse);
    this.checkSignature(partner, this.defaultMerchant(partner), body, 'accountVerification');
    if (!Object.hasOwn(CURRENCIES, fields.currency)) throw refuse(400, `unsupported currency ${fields.currency.slice(0, 10)}`);
    const code = this.accountCode(fields.account_code);
    const account = this.deps.accounts.find(code, fields.account_number, fields.currency);
    this.deps.log.debug('account verification', { account: maskAccount(fields.account_number), code, found: !!account });
    if (!account) throw refuse(400, 'account not found');
    return { status: 200, body: { success: true, message: 'Account verified', data: { account_name: account.account_name } } };
  }

  // ---------- payout ----------

  private countsFor(identity: PayoutIdentity): LedgerCounts {
    const key = payoutKey(identity);
    let entry = this.counts.get(key);
    if (!entry) {
      entry = { identity, calls: 0, attempts: 0, executions: 0, duplicates: 0 };
      this.counts.set(key, entry);
    }
    return entry;
  }

  private acceptance(record: PayoutRecord, message: string): Reply {
    return {
      status: 200,
      body: {
        success: true,
        message,
        data: {
          withdrawal_reference: record.identity.withdrawal_reference,
          platform_merchant_id: record.identity.platform_merchant_id,
          currency: record.identity.currency,
          amount: record.amount,
          status: this.settings.statusWords.pending,
          account_name: record.account_name,
          created_at: record.created_at,
        },
      },
    };
  }

  /**
   * Counts one Payout HTTP request in the request log, before any fault or check: the proof of "at
   * most one Payout call per reference" counts calls, not only executions.
   */
  recordCall(body: Record<string, unknown>): void {
    const { platform_merchant_id, currency, withdrawal_reference } = body;
    if (typeof platform_merchant_id !== 'string' || typeof currency !== 'string' || typeof withdrawal_reference !== 'string') return;
    this.countsFor({ platform_merchant_id, currency, withdrawal_reference }).calls += 1;
  }

  /**
   * Checks, verifies the account and commits a payout. Everything from the duplicate check to the
   * commit runs without an await, so concurrent requests cannot both pass the duplicate check.
   */
  payout(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    const partner = this.authenticate(headers, 'payout');
    const fields = requireStrings(
      body,
      ['amount', 'account_number', 'currency', 'withdrawal_reference', 'partner_id', 'platform_merchant_id', 'signature', 'account_code'],
      refuse,
    );
    const merchantId = this.merchantOf(partner, fields);
    this.checkSignature(partner, merchantId, body, 'payout');
    const amount = this.canonicalAmount(fields.amount, fields.currency);
    const code = this.accountCode(fields.account_code);
    const identity: PayoutIdentity = {
      platform_merchant_id: merchantId,
      currency: fields.currency,
      withdrawal_reference: fields.withdrawal_reference,
    };
    const counts = this.countsFor(identity);
    counts.attempts += 1;
    const existing = this.payouts.get(payoutKey(identity));
    if (existing) {
      counts.duplicates += 1;
      this.deps.log.info('payout: duplicate withdrawal_reference', {
        withdrawalReference: identity.withdrawal_reference,
        rule: this.settings.duplicateRule,
      });
      if (this.settings.duplicateRule === 'refuse') {
        throw refuse(409, `duplicate withdrawal_reference ${identity.withdrawal_reference} for this merchant and currency`);
      }
      return this.acceptance(existing, 'Payout already exists');
    }
    const account = this.deps.accounts.find(code, fields.account_number, fields.currency);
    if (!account) throw refuse(400, 'account not found');
    const now = Date.now();
    const rule = this.settings.progression.outcome;
    const fails =
      account.failPayouts === true ||
      (rule.failAccountNumbers ?? []).includes(fields.account_number) ||
      (rule.failAmounts ?? []).includes(amount) ||
      this.chance(rule.failProbability);
    const slow = this.deps.faults.get('getPayout');
    const slowMs = slow.slowProgressionMs ?? 0;
    const slowChecks = slow.slowProgressionChecks ?? 0;
    if (slowMs > 0 || slowChecks > 0) this.deps.faults.count('getPayout', 'slowProgression');
    const record: PayoutRecord = {
      identity,
      partner_code: partner.partner_code,
      amount,
      account_number: fields.account_number,
      account_code: code,
      account_name: account.account_name,
      state: 'pending',
      outcome: fails ? 'failed' : 'succeeded',
      createdMs: now,
      created_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
      checks: 0,
      settleAfterMs: this.settings.progression.settleAfterMs + slowMs,
      settleAfterChecks: this.settings.progression.settleAfterChecks + slowChecks,
      shown: false,
    };
    this.payouts.set(payoutKey(identity), record);
    counts.executions += 1;
    this.deps.log.info('payout executed', {
      withdrawalReference: identity.withdrawal_reference,
      currency: identity.currency,
      amount,
      account: maskAccount(fields.account_number),
      outcome: record.outcome,
    });
    if (record.settleAfterChecks === 0) this.scheduleSettle(record, record.settleAfterMs);
    return this.acceptance(record, 'Payout initiated');
  }

  private chance(probability: number | undefined): boolean {
    if (probability === undefined || probability <= 0) return false;
    return probability >= 1 || this.deps.random() < probability;
  }

  private scheduleSettle(record: PayoutRecord, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.settle(record, record.outcome);
    }, delayMs);
    this.timers.add(timer);
  }

  private settle(record: PayoutRecord, outcome: 'succeeded' | 'failed'): void {
    if (record.state !== 'pending') return;
    record.state = outcome;
    record.updated_at = new Date().toISOString();
    this.deps.log.info('payout settled', { withdrawalReference: record.identity.withdrawal_reference, outcome });
    if (this.settings.notifyOnSettle && this.notificationUrlOf(record.partner_code)) {
      void this.notifyPayout(record, {}, true).catch((error: unknown) => {
        this.deps.log.warn('payout notification failed', { error: String(error) });
      });
    }
  }

  /** Admin: settles a pending payout now with the given outcome (a no-op on a settled one). */
  settlePayout(identity: PayoutIdentity, outcome: 'succeeded' | 'failed'): LedgerEntry {
    const record = this.payouts.get(payoutKey(identity));
    if (!record) throw refuse(404, 'no payout with this identity');
    this.settle(record, outcome);
    return this.ledgerEntry(this.countsFor(identity));
  }

  /**
   * Admin: the delivered money of a settled, successful payout comes back (a bank return). GetPayout
   * then answers REVERSED, and an order notification with payment status REFUND is posted when a
   * notification URL is registered.
   */
  async reversePayout(identity: PayoutIdentity): Promise<LedgerEntry> {
    const record = this.payouts.get(payoutKey(identity));
    if (!record) throw refuse(404, 'no payout with this identity');
    if (record.state !== 'succeeded') throw refuse(409, `only a delivered payout can be reversed; this one is ${record.state}`);
    record.state = 'reversed';
    record.updated_at = new Date().toISOString();
    this.deps.log.info('payout reversed', { withdrawalReference: record.identity.withdrawal_reference });
    if (this.notificationUrlOf(record.partner_code)) await this.notifyPayout(record, {}, false);
    return this.ledgerEntry(this.countsFor(identity));
  }

  private statusWord(state: PayoutState): string {
    const words = this.settings.statusWords;
    if (state === 'reversed') return REVERSED_WORD;
    return state === 'pending' ? words.pending : state === 'succeeded' ? words.success : words.failure;
  }

  // ---------- payout status ----------

  getPayout(headers: IncomingHttpHeaders, query: URLSearchParams): Reply {
    const partner = this.authenticate(headers, 'getPayout');
    const missing = ['platform_merchant_id', 'currency', 'withdrawal_reference'].filter((name) => !query.get(name));
    if (missing.length > 0) throw refuse(400, `missing query parameter(s): ${missing.join(', ')}`);
    const identity: PayoutIdentity = {
      platform_merchant_id: query.get('platform_merchant_id') as string,
      currency: query.get('currency') as string,
      withdrawal_reference: query.get('withdrawal_reference') as string,
    };
    const record = this.payouts.get(payoutKey(identity));
    const notFound: Reply = { status: 200, body: { withdrawal_reference: '', amount: '', currency: '', status: '', customer: {} } };
    if (!record || record.partner_code !== partner.partner_code) return notFound;
    // A flapping read side: a payout it has already shown is, now and then, "not found".
    if (record.shown && this.deps.faults.roll('getPayout', 'flap', this.deps.faults.get('getPayout').flapRate)) return notFound;
    record.shown = true;
    // settleAfterChecks is the number of checks that still see the payout in progress.
    const due = record.checks >= record.settleAfterChecks && Date.now() - record.createdMs >= record.settleAfterMs;
    record.checks += 1;
    if (record.state === 'pending' && due) this.settle(record, record.outcome);
    return { status: 200, body: this.statusBody(record) };
  }

  private statusBody(record: PayoutRecord): Record<string, unknown> {
    const faults = this.deps.faults;
    const f = faults.get('getPayout');
    let status = this.statusWord(record.state);
    if (record.state === 'pending' && faults.roll('getPayout', 'gatewayError', f.gatewayErrorRate)) {
      status = 'GATEWAY_ERROR';
    } else if (ALTERNATIVE_WORD[status] && faults.roll('getPayout', 'alternativeWords', f.alternativeWordsRate)) {
      status = ALTERNATIVE_WORD[status] as string;
    }
    return {
      withdrawal_reference: record.identity.withdrawal_reference,
      amount: record.amount,
      currency: record.identity.currency,
      status,
      channel: isMobileMoney(record.account_code) ? 'mobile_money' : 'bank',
      type: 'payout',
      customer: { accountName: record.account_name, accountNumber: record.account_number },
      network: record.account_code,
      created_at: record.created_at,
      updated_at: record.updated_at,
    };
  }

  // ---------- ledger ----------

  private ledgerEntry(counts: LedgerCounts): LedgerEntry {
    const record = this.payouts.get(payoutKey(counts.identity));
    return {
      ...counts.identity,
      executions: counts.executions,
      calls: counts.calls,
      attempts: counts.attempts,
      duplicates: counts.duplicates,
      status: record ? this.statusWord(record.state) : 'NOT_CREATED',
      ...(record ? { amount: record.amount } : {}),
    };
  }

  /** Every payout identity seen by Payout, oldest first. */
  ledger(): LedgerEntry[] {
    return [...this.counts.values()].map((c) => this.ledgerEntry(c));
  }

  // ---------- collection orders and notifications ----------

  /**
   * Creates a collection order from the public shape: `partner_order_id`, `amount_to_collect` and
   * `timestamp`, signed with the merchant + partner secrets. `currency` (default GHS),
   * `platform_merchant_id` (default: the partner's first merchant) and `partner_id` are optional;
   * when present they must belong to the partner of the public key.
   */
  collectionOrder(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    const partner = this.authenticate(headers, 'collectionOrder');
    const fields = requireStrings(body, ['partner_order_id', 'amount_to_collect', 'timestamp', 'signature'], refuse);
    const optional = (name: string): string | undefined => (typeof body[name] === 'string' && body[name] !== '' ? (body[name] as string) : undefined);
    const merchantId = this.merchantOf(partner, {
      partner_id: optional('partner_id') ?? partner.partner_id,
      platform_merchant_id: optional('platform_merchant_id') ?? ([...partner.merchants.keys()][0] as string),
    });
    this.checkSignature(partner, merchantId, body, 'collectionOrder');
    if (Number.isNaN(Date.parse(fields.timestamp)) && !/^\d{10,13}$/.test(fields.timestamp)) {
      throw refuse(400, 'timestamp must be an ISO 8601 time or epoch seconds/milliseconds');
    }
    const currency = optional('currency') ?? COLLECTION_DEFAULT_CURRENCY;
    const amount = this.canonicalAmount(fields.amount_to_collect, currency);
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

  collectionOrders(): CollectionOrder[] {
    return structuredClone([...this.orders.values()]);
  }

  private notificationUrlOf(partnerCode: string): string | undefined {
    return this.partners.get(partnerCode)?.notificationUrl ?? this.defaultNotificationUrl;
  }

  private async post(partnerCode: string, merchantId: string, data: Record<string, unknown>[]): Promise<Delivery[]> {
    const partner = this.partners.get(partnerCode) as Partner;
    const url = this.notificationUrlOf(partnerCode);
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
  private notifyPayout(record: PayoutRecord, override: OrderNotificationRequest, onSettle: boolean): Promise<Delivery[]> {
    const batch = [this.payoutNotificationData(record, record.state, override)];
    if (onSettle && this.deps.faults.roll('orderNotification', 'outOfOrder', this.deps.faults.get('orderNotification').outOfOrderRate)) {
      batch.push(this.payoutNotificationData(record, 'pending', {}));
    }
    return this.post(record.partner_code, record.identity.platform_merchant_id, batch);
  }

  /** Admin: posts a signed order notification for a payout (by identity) or a collection order (by order_reference). */
  async sendOrderNotification(request: OrderNotificationRequest): Promise<Delivery[]> {
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
    const record = this.payouts.get(payoutKey({ platform_merchant_id, currency, withdrawal_reference }));
    if (!record) throw refuse(404, 'no payout with this identity');
    return this.notifyPayout(record, request, false);
  }

  // ---------- lifecycle ----------

  /** Forgets every partner, payout and order (the seeded accounts live in the AccountBook). */
  reset(): void {
    this.stop();
    for (const map of [this.partners, this.byPublicKey, this.byMerchant, this.payouts, this.counts, this.orders, this.oneTimeLinks]) {
      map.clear();
    }
    this.defaultNotificationUrl = undefined;
  }

  /** Cancels pending settlement timers. */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}

