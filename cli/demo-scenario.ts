import type { PayoutState } from '@shared/domain/payout';
import type { PayoutRequest } from '@shared/messages/payout-request';
import { payableAccounts, type PayableAccount } from '@simulator/accounts';
import { targetFingerprints } from './operator';
import { CliError, EXIT } from './output';
import { requireEnv, type GlobalOptions, type Target } from './target';

/** One payout of the scenario and the final state it must reach. */
export interface DemoPayout {
  readonly request: PayoutRequest;
  readonly expect: PayoutState;
  /** What the row demonstrates, for the summary. */
  readonly role: 'normal' | 'name mismatch' | 'unknown account' | 'ambiguous time-out';
}

/** Seeded simulator accounts (docs/simulator.md) the normal rows pay to, GHS then NGN, with the names they hold. */
const ACCOUNTS = payableAccounts(['GHS', 'NGN']);

/**
 * The demo's 50 payouts: 47 normal ones (some with the expected name written differently, which the
 * name policy still accepts), one whose expected name is someone else's, one to an account the
 * provider does not know, and one whose Payout call times out after the provider committed it.
 */
export function demoPayouts(merchant: string, runId: string): { timeout: DemoPayout; rest: DemoPayout[] } {
  const ref = (n: number): string => `DEMO-${runId}-${String(n).padStart(2, '0')}`;
  const base = (n: number, account: PayableAccount, amount: string) => ({
    version: 1 as const,
    platform_merchant_id: merchant,
    currency: account.currency,
    withdrawal_reference: ref(n),
    amount,
    account_number: account.account_number,
    account_code: account.account_code,
  });
  const [ghsBank, ghsMtn] = ACCOUNTS;
  if (!ghsBank || !ghsMtn) throw new CliError('the simulator seeds no GHS bank and mobile-money accounts');
  const timeout: DemoPayout = {
    request: { ...base(1, ghsBank, '250.00'), expected_name: 'Kofi Asante' },
    expect: 'SUCCEEDED',
    role: 'ambiguous time-out',
  };
  const rest: DemoPayout[] = [
    { request: { ...base(2, ghsMtn, '40.00'), expected_name: 'Ama Serwaa' }, expect: 'REJECTED', role: 'name mismatch' },
    { request: { ...base(3, ghsMtn, '15.00'), account_number: '0249999999' }, expect: 'REJECTED', role: 'unknown account' },
  ];
  for (let n = 4; n <= 50; n += 1) {
    const account = ACCOUNTS[n % ACCOUNTS.length] as PayableAccount;
    // Every third row names the beneficiary, some in another order and case ("MENSAH kwame").
    const named = n % 3 === 0 ? { expected_name: n % 2 === 0 ? account.name.split(' ').reverse().join(' ').toUpperCase() : account.name } : {};
    rest.push({ request: { ...base(n, account, `${10 + n}.${String(n % 100).padStart(2, '0')}`), ...named }, expect: 'SUCCEEDED', role: 'normal' });
  }
  return { timeout, rest };
}

/** The simulator's admin API over HTTP (loopback only), as the demo drives it. */
export function simulatorAdmin(simulatorUrl: string) {
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${simulatorUrl}/__admin${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new CliError(`simulator admin ${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
  return {
    setFaults: (operation: string, faults: Record<string, unknown>) => call('PUT', `/faults/${operation}`, faults),
    clearFaults: () => call('DELETE', '/faults'),
    advanceKyc: (request: Record<string, unknown>) => call<unknown[]>('POST', '/kyc/advance', request),
    /** The customer pays a collection order: the simulator posts its order notification (COMPLETED / PAID by default). */
    notifyOrder: (request: { order_reference: string; order_status?: string; payment_status?: string }) =>
      call<Array<{ status: number }>>('POST', '/notifications', request),
    ledger: () => call<Array<{ platform_merchant_id: string; currency: string; withdrawal_reference: string; executions: number; status: string }>>('GET', '/ledger'),
  };
}

export interface DemoProgress {
  (line: string): void;
}

export interface DemoOptions {
  /** Give up waiting for final states after this long. */
  readonly timeoutMs?: number;
  readonly pollMs?: number;
}

export interface DemoResult {
  readonly runId: string;
  readonly kyc: { userReference: string; orderId: string; phase?: string; decision?: string; confirmed: boolean };
  /** The one collection order the demo creates and the customer pays. */
  readonly collection: { orderId: string; amount: string; currency: string; orderStatus: string; paymentStatus: string };
  readonly payouts: Array<{ withdrawal_reference: string; role: DemoPayout['role']; expected: PayoutState; state: PayoutState; reason?: string }>;
  readonly counts: Record<string, number>;
  /** Simulator ledger: executions per reference of this run; never more than 1. */
  readonly maxExecutions: number;
  readonly ledgerEntries: number;
  readonly allAsExpected: boolean;
  readonly elapsedMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const WORKER_DONE: ReadonlySet<PayoutState> = new Set(['SUBMITTED', 'UNKNOWN', 'REJECTED', 'FAILED', 'SUCCEEDED', 'NEEDS_REVIEW']);
const FINAL: ReadonlySet<PayoutState> = new Set(['REJECTED', 'FAILED', 'SUCCEEDED', 'NEEDS_REVIEW']);

const LOCAL_ONLY = 'the demo drives the local simulator: run it against `npm start` (not --stack, not --provider-url)';

/**
 * Refuses `--stack` and `--provider-url` before anything is asked of AWS or a provider: the demo pays
 * seeded simulator accounts and drives the simulator's admin API, which a deployed stack has not.
 * @throws CliError (usage)
 */
export function refuseNonLocalDemo(globals: Pick<GlobalOptions, 'stack' | 'providerUrl'>): void {
  if (globals.stack !== undefined || globals.providerUrl !== undefined) throw new CliError(LOCAL_ONLY, EXIT.usage);
}

/**
 * Drives the demo scenario through a running local stack, over the same paths a user takes: a KYC
 * order completed through the simulator's callbacks to the gateway, one collection order the
 * simulator's customer pays, then 50 payouts enqueued like `payouts enqueue` does, worked by the SQS
 * poller and settled by the scheduled reconciler.
 * The target env must already be applied to process.env (the shared adapters read it at load).
 */
export async function runDemo(target: Target, progress: DemoProgress, options: DemoOptions = {}): Promise<DemoResult> {
  const started = Date.now();
  const simulatorUrl = target.urls.simulator;
  const gateway = target.urls.gateway;
  if (target.kind !== 'local' || !simulatorUrl || !gateway) throw new CliError(LOCAL_ONLY);
  const timeoutMs = options.timeoutMs ?? 180_000;
  const pollMs = options.pollMs ?? 1000;
  const admin = simulatorAdmin(simulatorUrl);
  const runId = new Date().toISOString().replace(/\D/g, '').slice(2, 14);

  const { cachedSecret, providerSecretSchema, kycSecretSchema } = await import('@shared/adapters/secrets');
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const { createKycRepository } = await import('@shared/adapters/kyc-repository');
  const { sqsClient } = await import('@shared/adapters/sqs-client');
  const { KycServiceClient } = await import('@shared/providers/kyc-client');
  const { createKycOrder } = await import('@shared/app/create-kyc-order');
  const { enqueuePayouts } = await import('./enqueue');
  const { cliLog } = await import('./log');

  const provider = await cachedSecret(requireEnv(target, 'PROVIDER_SECRET_ID'), providerSecretSchema).get({ forceFetch: true });
  const kycSecret = cachedSecret(requireEnv(target, 'KYC_SECRET_ID'), kycSecretSchema);
  const payouts = createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME'));
  const kycRepository = createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') });
  const deadline = started + timeoutMs;
  const waitUntil = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    while (!(await check())) {
      if (Date.now() > deadline) throw new CliError(`demo timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
      await sleep(pollMs);
    }
  };

  // 1. KYC: an individual order whose callbacks come back to the gateway, then the user finishes the journey.
  const userReference = `demo-user-${runId}`;
  const kycClient = new KycServiceClient({ baseUrl: requireEnv(target, 'KYC_API_BASE_URL'), timeoutMs: 10_000 });
  const order = await createKycOrder(
    {
      kyc: kycClient,
      orders: kycRepository,
      secret: kycSecret,
      apiBaseUrl: gateway,
      clock: { now: () => new Date() },
      log: cliLog,
    },
    { kind: 'individual', reference: userReference, full_name: 'Ama Demo', email: 'ama.demo@example.com', phone: '+233200000001' },
  );
  kycClient.close();
  progress(`KYC order ${order.orderId} created for ${userReference}; the user finishes the journey at the simulator...`);
  await admin.advanceKyc({ order_id: order.orderId, action: 'finish', decision: 'approved' });
  const appId = (await kycSecret.get()).app_id;
  let subject: Awaited<ReturnType<typeof kycRepository.getSubject>>;
  await waitUntil('the KYC callbacks', async () => {
    subject = await kycRepository.getSubject({ appId, userReference });
    return subject?.phase === 'completed';
  });
  progress(`KYC callbacks received: ${userReference} is ${subject?.phase}/${subject?.decision}; confirming the approval by pull...`);
  // An approval counts only once the verification-status endpoint confirms it (docs/webhooks.md).
  const { confirmApprovals } = await import('./commands/kyc');
  await confirmApprovals(target);

  // 2. A collection order: created through the payout service, paid by the customer at the simulator,
  // moved to COMPLETED / PAID by the order notification through the gateway.
  const collection = await demoCollection(target, admin, `DEMO-COL-${runId}`, waitUntil);
  progress(`collection ${collection.orderId}: ${collection.amount} ${collection.currency} is ${collection.orderStatus}/${collection.paymentStatus}`);

  // 3. Payouts. The time-out first, alone, so the one injected fault hits exactly that payout.
  const { timeout, rest } = demoPayouts(provider.platform_merchant_id, runId);
  const deps = { repository: payouts, sqs: sqsClient(), queueUrl: requireEnv(target, 'PAYOUTS_QUEUE_URL'), fingerprints: await targetFingerprints(target) };
  await admin.setFaults('payout', { timeoutRate: 1, times: 1 });
  try {
    await enqueuePayouts([timeout.request], deps);
    progress(`${timeout.request.withdrawal_reference}: the provider commits it but never answers (time-out)...`);
    await waitUntil('the timed-out payout', async () => {
      const p = await payouts.get(timeout.request);
      return p !== undefined && WORKER_DONE.has(p.state);
    });
  } finally {
    await admin.clearFaults();
  }
  progress(`${timeout.request.withdrawal_reference} is ${(await payouts.get(timeout.request))?.state}; enqueueing the other ${rest.length}...`);
  const report = await enqueuePayouts(
    rest.map((r) => r.request),
    deps,
  );
  if (report.failed.length > 0) throw new CliError(`${report.failed.length} demo payouts could not be enqueued`);

  // 4. Wait for every payout to be final: the simulator settles each a few seconds after it committed
  // it and posts an order notification; the receiver makes the payout due, the reconciler settles it.
  const all = [timeout, ...rest];
  let states = new Map<string, { state: PayoutState; reason?: string }>();
  let lastLine = '';
  await waitUntil('final states', async () => {
    states = new Map();
    for (const p of all) {
      const stored = await payouts.get(p.request);
      if (stored) states.set(p.request.withdrawal_reference, { state: stored.state, ...(stored.record.reason ? { reason: stored.record.reason } : {}) });
    }
    const counts = countStates([...states.values()].map((s) => s.state));
    const line = Object.entries(counts)
      .map(([state, n]) => `${state} ${n}`)
      .join(', ');
    if (line !== lastLine) progress(`payouts: ${line}`);
    lastLine = line;
    return all.every((p) => FINAL.has(states.get(p.request.withdrawal_reference)?.state as PayoutState));
  });

  const ledger = (await admin.ledger()).filter((e) => e.withdrawal_reference.startsWith(`DEMO-${runId}-`));
  const rows = all.map((p) => {
    const s = states.get(p.request.withdrawal_reference) as { state: PayoutState; reason?: string };
    return { withdrawal_reference: p.request.withdrawal_reference, role: p.role, expected: p.expect, state: s.state, ...(s.reason ? { reason: s.reason } : {}) };
  });
  const finalSubject = await kycRepository.getSubject({ appId, userReference });
  return {
    runId,
    kyc: {
      userReference,
      orderId: order.orderId,
      ...(finalSubject ? { phase: finalSubject.phase, decision: finalSubject.decision } : {}),
      confirmed: finalSubject?.confirmedAt !== undefined,
    },
    collection,
    payouts: rows,
    counts: countStates(rows.map((r) => r.state)),
    maxExecutions: Math.max(0, ...ledger.map((e) => e.executions)),
    ledgerEntries: ledger.length,
    allAsExpected: rows.every((r) => r.state === r.expected) && collection.orderStatus === 'COMPLETED' && collection.paymentStatus === 'PAID',
    elapsedMs: Date.now() - started,
  };
}

/**
 * Creates one collection order with the `collections create` use case, has the simulator's customer
 * pay it, and reads it back once the order notification has been applied.
 */
async function demoCollection(
  target: Target,
  admin: ReturnType<typeof simulatorAdmin>,
  orderId: string,
  waitUntil: (what: string, check: () => Promise<boolean>) => Promise<void>,
): Promise<DemoResult['collection']> {
  const { createCollection, getCollection } = await import('@shared/app/collections');
  const { createCollectionRepository } = await import('@shared/adapters/collection-repository');
  const { systemClock } = await import('@shared/adapters/system-clock');
  const { payoutServiceFor } = await import('./operator');
  const { cliLog } = await import('./log');
  const collections = createCollectionRepository({ tableName: requireEnv(target, 'COLLECTIONS_TABLE_NAME') });
  const { provider, credentials } = await payoutServiceFor(target);
  try {
    const created = await createCollection({ collections, provider, credentials, clock: systemClock, log: cliLog }, { partnerOrderId: orderId, amount: '75.00', currency: 'GHS' });
    const reference = created.collection.orderReference;
    if (reference === undefined) throw new CliError(`the simulator created collection ${orderId} without an order reference`);
    // The notification is delivered (stored and answered 200) before the admin call answers; the
    // callback applier applies it to the collection right after.
    const [delivery] = await admin.notifyOrder({ order_reference: reference });
    if (delivery?.status !== 200) throw new CliError(`the order notification of ${orderId} was answered ${delivery?.status ?? 'not at all'} by the gateway`);
    let paid = await getCollection({ collections }, orderId);
    await waitUntil('the order notification to be applied', async () => {
      paid = await getCollection({ collections }, orderId);
      return paid.paymentStatus === 'PAID';
    });
    return { orderId, amount: paid.amount, currency: paid.currency, orderStatus: paid.orderStatus, paymentStatus: paid.paymentStatus };
  } finally {
    provider.close();
  }
}

function countStates(states: readonly PayoutState[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of states) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}
