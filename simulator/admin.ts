import type { PayoutIdentity } from '@shared/domain/identity';
import { AccountConfigError, type AccountBook, type SimAccount } from './accounts';
import { FaultConfigError, type FaultBook, type FaultKind, type FaultOperation, type OperationFaults } from './faults';
import { payoutRefusal, type Reply } from './refusals';
import type { KycAdvanceRequest, KycService } from './kyc-service';
import type { Outbox, OutboxMessage, PartnerCredentials } from './outbox';
import type { Delivery, Outgoing } from './outgoing';
import type { CollectionOrder } from './collection-orders';
import type { LedgerEntry } from './ledger';
import type { OrderNotificationRequest } from './order-notifications';
import type { PayoutService } from './payout-service';

/** The in-process admin handle; every method is also reachable over HTTP under /__admin (docs/simulator.md). */
export interface SimulatorAdmin {
  /** Registers a partner (or adds a merchant to a known partner_code); returns that merchant's credentials. */
  createPartner(input: { partner_code: string; email: string; platform_merchant_id?: string }): PartnerCredentials;
  /** Current credentials of a partner's merchant (default: its first merchant). */
  credentials(partner_code: string, platform_merchant_id?: string): PartnerCredentials;
  /** Issues new keys now (the "keys reset mid-run" fault as an action); old keys get 401. */
  resetPartnerKeys(partner_code: string): PartnerCredentials;
  /** The simulated e-mails, optionally to one address. */
  outbox(to?: string): OutboxMessage[];
  /** Executions and state per payout identity. */
  ledger(): LedgerEntry[];
  /** Settles a pending payout now. */
  settlePayout(identity: PayoutIdentity, outcome: 'succeeded' | 'failed'): LedgerEntry;
  /** The money of a delivered payout comes back: GetPayout answers REVERSED, a REFUND notification is posted. */
  reversePayout(identity: PayoutIdentity): Promise<LedgerEntry>;
  setFaults(operation: FaultOperation, faults: OperationFaults): void;
  clearFaults(): void;
  /** Fault settings in force and counts of injected faults per operation and kind. */
  faults(): {
    settings: Partial<Record<FaultOperation, OperationFaults>>;
    counts: Partial<Record<FaultOperation, Partial<Record<FaultKind, number>>>>;
  };
  addAccount(account: SimAccount): SimAccount;
  accounts(): SimAccount[];
  /** Plays the KYC end user: next step, finish (approved|rejected), or change a finished decision. */
  advanceKyc(request: KycAdvanceRequest): Promise<Delivery[]>;
  /** Registers where order notifications go: for one partner, or the default for all. */
  setNotificationUrl(url: string, partner_code?: string): void;
  sendOrderNotification(request: OrderNotificationRequest): Promise<Delivery[]>;
  /** Order notifications posted so far. */
  notifications(): Delivery[];
  /** KYC callbacks posted so far (with the answer of the receiver). */
  callbacks(): Delivery[];
  collectionOrders(): CollectionOrder[];
  /** Forgets partners, payouts, apps, orders, deliveries, outbox, faults and their counts; accounts stay. */
  reset(): void;
}

/** Builds the admin handle over the simulator's parts. */
export function createAdmin(parts: {
  payout: PayoutService;
  kyc: KycService;
  faults: FaultBook;
  accounts: AccountBook;
  outbox: Outbox;
  outgoing: Outgoing;
}): SimulatorAdmin {
  const { payout, kyc, faults, accounts, outbox, outgoing } = parts;
  return {
    createPartner: (input) => payout.createPartner(input),
    credentials: (code, merchant) => payout.credentials(code, merchant),
    resetPartnerKeys: (code) => {
      const credentials = payout.resetKeys(code);
      faults.count('payout', 'keysReset');
      return credentials;
    },
    outbox: (to) => outbox.list(to),
    ledger: () => payout.ledger(),
    settlePayout: (identity, outcome) => payout.settlePayout(identity, outcome),
    reversePayout: (identity) => payout.reversePayout(identity),
    setFaults: (operation, settings) => faults.set(operation, settings),
    clearFaults: () => faults.clear(),
    faults: () => ({ settings: faults.all(), counts: faults.countsSnapshot() }),
    addAccount: (account) => accounts.add(account),
    accounts: () => accounts.list(),
    advanceKyc: (request) => kyc.advance(request),
    setNotificationUrl: (url, code) => payout.setNotificationUrl(url, code),
    sendOrderNotification: (request) => payout.sendOrderNotification(request),
    notifications: () => outgoing.list().filter((d) => d.operation === 'orderNotification'),
    callbacks: () => outgoing.list().filter((d) => d.operation === 'kycCallback'),
    collectionOrders: () => payout.collectionOrders(),
    reset: () => {
      payout.reset();
      kyc.reset();
      faults.clear();
      faults.resetCounts();
      outbox.clear();
      outgoing.clear();
    },
  };
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Routes one /__admin request to the admin handle. Configuration mistakes (unknown fault
 * operation, malformed account) answer 400 with the reason.
 */
export async function adminRoute(
  admin: SimulatorAdmin,
  method: string,
  path: string,
  query: URLSearchParams,
  body: Record<string, unknown>,
): Promise<Reply> {
  const ok = (value: unknown): Reply => ({ status: 200, body: value });
  const sub = path.slice('/__admin'.length) || '/';
  try {
    const route = `${method} ${sub}`;
    switch (route) {
      case 'GET /outbox':
        return ok(admin.outbox(query.get('to') ?? undefined));
      case 'GET /ledger':
        return ok(admin.ledger());
      case 'POST /ledger/settle': {
        const outcome = body.outcome === 'failed' ? 'failed' : body.outcome === 'succeeded' ? 'succeeded' : undefined;
        if (!outcome) throw payoutRefusal(400, 'outcome must be succeeded or failed');
        return ok(admin.settlePayout(body as unknown as PayoutIdentity, outcome));
      }
      case 'POST /ledger/reverse':
        return ok(await admin.reversePayout(body as unknown as PayoutIdentity));
      case 'GET /faults':
        return ok(admin.faults());
      case 'DELETE /faults':
        admin.clearFaults();
        return ok(admin.faults());
      case 'GET /accounts':
        return ok(admin.accounts());
      case 'POST /accounts':
        return ok(admin.addAccount(body as unknown as SimAccount));
      case 'POST /partners': {
        const partner_code = str(body.partner_code);
        const email = str(body.email);
        if (!partner_code || !email) throw payoutRefusal(400, 'partner_code and email are required');
        return ok(admin.createPartner({ partner_code, email, platform_merchant_id: str(body.platform_merchant_id) }));
      }
      case 'POST /kyc/advance':
        return ok(await admin.advanceKyc(body as KycAdvanceRequest));
      case 'GET /notifications':
        return ok(admin.notifications());
      case 'POST /notifications':
        return ok(await admin.sendOrderNotification(body as OrderNotificationRequest));
      case 'PUT /notification-url': {
        const url = str(body.url);
        if (!url) throw payoutRefusal(400, 'url is required');
        admin.setNotificationUrl(url, str(body.partner_code));
        return ok({ url, partner_code: str(body.partner_code) ?? null });
      }
      case 'GET /callbacks':
        return ok(admin.callbacks());
      case 'GET /collection-orders':
        return ok(admin.collectionOrders());
      case 'POST /reset':
        admin.reset();
        return ok({ reset: true });
    }
    const faultMatch = /^\/faults\/([A-Za-z]+)$/.exec(sub);
    if (faultMatch && method === 'PUT') {
      admin.setFaults(faultMatch[1] as FaultOperation, body as OperationFaults);
      return ok(admin.faults());
    }
    const partnerMatch = /^\/partners\/([^/]+)\/(credentials|reset-keys)$/.exec(sub);
    if (partnerMatch) {
      const code = decodeURIComponent(partnerMatch[1] as string);
      if (partnerMatch[2] === 'credentials' && method === 'GET') {
        return ok(admin.credentials(code, query.get('platform_merchant_id') ?? undefined));
      }
      if (partnerMatch[2] === 'reset-keys' && method === 'POST') return ok(admin.resetPartnerKeys(code));
    }
    throw payoutRefusal(404, `no admin endpoint ${method} ${path}`);
  } catch (error) {
    if (error instanceof FaultConfigError || error instanceof AccountConfigError) {
      throw payoutRefusal(400, error.message);
    }
    throw error;
  }
}
