import type { IncomingHttpHeaders } from 'node:http';
import { isMobileMoney, maskAccount } from '@shared/domain/account';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { CURRENCIES } from '@shared/domain/money';
import type { SigningProfile } from '@shared/signing';
import type { AccountBook } from './accounts';
import { PartnerAuthentication } from './authentication';
import { CollectionOrders, type CollectionOrder } from './collection-orders';
import type { FaultBook } from './faults';
import { Ledger, type LedgerEntry } from './ledger';
import type { SimLogger } from './logger';
import { OrderNotifications, type OrderNotificationRequest } from './order-notifications';
import type { Outbox, PartnerCredentials } from './outbox';
import type { Delivery, Outgoing } from './outgoing';
import { PartnerRegistry } from './partners';
import { accountCodeOf, canonicalAmount } from './payout-fields';
import type { PayoutRecord, PayoutState } from './payout-record';
import type { Random } from './prng';
import { payoutRefusal as refuse, type Reply } from './refusals';
import { requireStrings } from './request-body';

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

/** GetPayout's word for a payout whose delivered money came back. */
export const REVERSED_WORD = 'REVERSED';

/**
 * The simulated partner payout service: account verification, payouts and their settlement, and
 * GetPayout. Partners and keys (`partners.ts`), authentication (`authentication.ts`), the ledger
 * (`ledger.ts`), collection orders (`collection-orders.ts`) and order notifications
 * (`order-notifications.ts`) are modules of their own; the methods the HTTP routes and the admin
 * API call are here, delegating to them.
 */
export class PayoutService {
  private readonly payouts = new Map<string, PayoutRecord>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly partners: PartnerRegistry;
  private readonly auth: PartnerAuthentication;
  private readonly ledgerBook: Ledger;
  private readonly orders: CollectionOrders;
  private readonly notifications: OrderNotifications;

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
  ) {
    this.partners = new PartnerRegistry(deps);
    this.auth = new PartnerAuthentication(this.partners, settings, deps);
    this.ledgerBook = new Ledger((identity) => {
      const record = this.payouts.get(payoutKey(identity));
      return record ? { status: this.statusWord(record.state), amount: record.amount } : undefined;
    });
    this.orders = new CollectionOrders(this.auth, deps);
    this.notifications = new OrderNotifications(this.partners, this.orders, (identity) => this.payouts.get(payoutKey(identity)), settings, deps);
  }

  // ---------- partners and keys (partners.ts) ----------

  /** Registers a partner or adds a merchant to it (`PartnerRegistry.createPartner`). */
  createPartner(input: { partner_code: string; email: string; platform_merchant_id?: string }): PartnerCredentials {
    return this.partners.createPartner(input);
  }

  /** New public and partner secret keys (`PartnerRegistry.resetKeys`). */
  resetKeys(partnerCode: string): PartnerCredentials {
    return this.partners.resetKeys(partnerCode);
  }

  /** A merchant's current credentials (`PartnerRegistry.credentials`). */
  credentials(partnerCode: string, merchantId?: string): PartnerCredentials {
    return this.partners.credentials(partnerCode, merchantId);
  }

  onboardPartner(body: Record<string, unknown>): Reply {
    return this.partners.onboardPartner(body);
  }

  resetPartnerKeys(body: Record<string, unknown>): Reply {
    return this.partners.resetPartnerKeys(body);
  }

  /** The one-time link (`PartnerRegistry.readOneTimeLink`). */
  readOneTimeLink(token: string): Reply {
    return this.partners.readOneTimeLink(token);
  }

  setNotificationUrl(url: string, partnerCode?: string): void {
    this.partners.setNotificationUrl(url, partnerCode);
  }

  // ---------- account verification ----------

  accountVerification(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    const partner = this.auth.authenticate(headers, 'accountVerification');
    const fields = requireStrings(body, ['account_number', 'account_code', 'currency', 'signature'], refuse);
    this.auth.checkSignature(partner, this.partners.defaultMerchant(partner), body, 'accountVerification');
    if (!Object.hasOwn(CURRENCIES, fields.currency)) throw refuse(400, `unsupported currency ${fields.currency.slice(0, 10)}`);
    const code = accountCodeOf(fields.account_code);
    const account = this.deps.accounts.find(code, fields.account_number, fields.currency);
    this.deps.log.debug('account verification', { account: maskAccount(fields.account_number), code, found: !!account });
    if (!account) throw refuse(400, 'account not found');
    return { status: 200, body: { success: true, message: 'Account verified', data: { account_name: account.account_name } } };
  }

// ---------- payout ----------

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

  /** Counts one Payout HTTP request in the ledger, before any fault or check (`Ledger.recordCall`). */
  recordCall(body: Record<string, unknown>): void {
    this.ledgerBook.recordCall(body);
  }

  /**
   * Checks, verifies the account and commits a payout. Everything from the duplicate check to the
   * commit runs without an await, so concurrent requests cannot both pass the duplicate check.
   */
  payout(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    const partner = this.auth.authenticate(headers, 'payout');
    const fields = requireStrings(
      body,
      ['amount', 'account_number', 'currency', 'withdrawal_reference', 'partner_id', 'platform_merchant_id', 'signature', 'account_code'],
      refuse,
    );
    const merchantId = this.auth.merchantOf(partner, fields);
    this.auth.checkSignature(partner, merchantId, body, 'payout');
    const amount = canonicalAmount(fields.amount, fields.currency);
    const code = accountCodeOf(fields.account_code);
    const identity: PayoutIdentity = {
      platform_merchant_id: merchantId,
      currency: fields.currency,
      withdrawal_reference: fields.withdrawal_reference,
    };
    const counts = this.ledgerBook.countsFor(identity);
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
    if (this.settings.notifyOnSettle && this.notifications.canNotify(record.partner_code)) {
      void this.notifications.notifyPayout(record, {}, true).catch((error: unknown) => {
        this.deps.log.warn('payout notification failed', { error: String(error) });
      });
    }
  }

  /** Admin: settles a pending payout now with the given outcome (a no-op on a settled one). */
  settlePayout(identity: PayoutIdentity, outcome: 'succeeded' | 'failed'): LedgerEntry {
    const record = this.payouts.get(payoutKey(identity));
    if (!record) throw refuse(404, 'no payout with this identity');
    this.settle(record, outcome);
    return this.ledgerBook.entry(identity);
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
    if (this.notifications.canNotify(record.partner_code)) await this.notifications.notifyPayout(record, {}, false);
    return this.ledgerBook.entry(identity);
  }

  private statusWord(state: PayoutState): string {
    const words = this.settings.statusWords;
    if (state === 'reversed') return REVERSED_WORD;
    return state === 'pending' ? words.pending : state === 'succeeded' ? words.success : words.failure;
  }

  // ---------- payout status ----------

  getPayout(headers: IncomingHttpHeaders, query: URLSearchParams): Reply {
    const partner = this.auth.authenticate(headers, 'getPayout');
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
    // A read side that lags behind the commit: not shown yet, so not found yet.
    if (!record.shown && this.deps.faults.roll('getPayout', 'lag', this.deps.faults.get('getPayout').lagRate)) return notFound;
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

  // ---------- ledger (ledger.ts) ----------

  /** The ledger's rows, oldest first (`Ledger.entries`). */
  ledger(): LedgerEntry[] {
    return this.ledgerBook.entries();
  }

  // ---------- collection orders and notifications (collection-orders.ts, order-notifications.ts) ----------

  collectionOrder(headers: IncomingHttpHeaders, body: Record<string, unknown>): Reply {
    return this.orders.create(headers, body);
  }

  collectionOrders(): CollectionOrder[] {
    return this.orders.list();
  }

  /** Admin: a signed order notification for a payout or a collection order (`OrderNotifications.send`). */
  sendOrderNotification(request: OrderNotificationRequest): Promise<Delivery[]> {
    return this.notifications.send(request);
  }

  // ---------- lifecycle ----------

  /** Forgets every partner, payout and order (the seeded accounts live in the AccountBook). */
  reset(): void {
    this.stop();
    this.payouts.clear();
    this.partners.clear();
    this.ledgerBook.clear();
    this.orders.clear();
  }

  /** Cancels pending settlement timers. */
  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
