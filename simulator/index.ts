import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_SIGNING_PROFILE, type SigningProfile } from '@shared/signing';
import { AccountBook, SEEDED_ACCOUNTS, type SimAccount } from './accounts';
import { createAdmin, type SimulatorAdmin } from './admin';
import { FaultBook, type FaultOperation, type OperationFaults } from './faults';
import { KycService, type KycOptions } from './kyc-service';
import { createLogger, type LogLevel } from './logger';
import { Outbox } from './outbox';
import { DEFAULT_DELIVERY_TIMEOUT_MS, Outgoing } from './outgoing';
import {
  DEFAULT_STATUS_WORDS,
  PAYOUT_PATHS,
  PayoutService,
  type DuplicateRule,
  type ProgressionOptions,
  type StatusWords,
} from './payout-service';
import { mulberry32 } from './prng';
import { buildRoutes, createRequestHandler, KYC_PREFIX } from './server';

export type { SimulatorAdmin } from './admin';
export type { SimAccount } from './accounts';
export { SEEDED_ACCOUNTS } from './accounts';
export type { FaultOperation, FaultKind, OperationFaults } from './faults';
export { FAULT_OPERATIONS } from './faults';
export type { KycOptions, KycAdvanceRequest, KycCallbackPayload } from './kyc-service';
export { KYC_TYPES, KYC_PATHS } from './kyc-service';
export type { OutboxMessage, PartnerCredentials } from './outbox';
export type { Delivery } from './outgoing';
export type { DuplicateRule, OutcomeRule, ProgressionOptions, StatusWords } from './payout-service';
export type { LedgerEntry } from './ledger';
export type { OrderNotificationRequest } from './order-notifications';
export { PAYOUT_PATHS } from './payout-service';
export type { LogLevel } from './logger';

/** Everything the simulator can be told at start; every field has a default (docs/simulator.md). */
export interface SimulatorOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Bind address (default 127.0.0.1). The admin API still answers loopback callers only. */
  host?: string;
  /** The profile the simulator verifies and signs with (default DEFAULT_SIGNING_PROFILE). */
  signingProfile?: SigningProfile;
  /** Rule for an already executed withdrawal_reference (default 'refuse': HTTP 409). */
  duplicateRule?: DuplicateRule;
  /** When and how payouts settle (default: at once, all succeed). */
  progression?: ProgressionOptions;
  /** Base words of GetPayout (default PENDING / COMPLETED / FAILED). */
  statusWords?: Partial<StatusWords>;
  /** Faults per operation from the start. */
  faults?: Partial<Record<FaultOperation, OperationFaults>>;
  /** Seed of the PRNG behind every random choice (default 1). */
  seed?: number;
  /** KYC journey play (default manual). */
  kyc?: KycOptions;
  /** Require "Bearer <key>" (default true); false also accepts the bare key. */
  bearerPrefixRequired?: boolean;
  /** Path of the collection-order endpoint (default /api/v1/no-auth/PartnerP2P/CollectionOrder). */
  collectionOrderPath?: string;
  /** Default notification URL for order notifications. */
  notificationUrl?: string;
  /** Post an order notification when a payout settles (default true, if a URL is registered). */
  notifyOnSettle?: boolean;
  /** Accounts added to the seeded ones. */
  accounts?: SimAccount[];
  /** Log level (default silent). */
  log?: LogLevel;
  /**
   * How long a callback or notification post waits for an answer before it counts as failed
   * (default 5000 ms, like a provider's client). Tests that prove ordering on a loaded machine raise it.
   */
  deliveryTimeoutMs?: number;
}

/** A running simulator. */
export interface SimulatorHandle {
  /** Root URL, e.g. http://127.0.0.1:4010 */
  url: string;
  /** Base URL of the payout service (the root URL). */
  payoutBaseUrl: string;
  /** Base URL of the KYC service (root URL + /kyc). */
  kycBaseUrl: string;
  admin: SimulatorAdmin;
  /** Stops the server: pending timers, held sockets and posts in flight end too. */
  stop(): Promise<void>;
}

/** Thrown when an option is out of range. */
export class SimulatorConfigError extends Error {
  override name = 'SimulatorConfigError';
}

function nonNegative(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new SimulatorConfigError(`${name} must be a non-negative number`);
  return value;
}

/**
 * Starts both simulated providers on one port of 127.0.0.1 (the KYC service under /kyc) and
 * returns their URLs and the admin handle.
 */
export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorHandle> {
  const log = createLogger(options.log ?? 'silent');
  const seed = nonNegative(options.seed, 'seed', 1);
  const random = mulberry32(seed);
  const faults = new FaultBook(seed);
  for (const [operation, settings] of Object.entries(options.faults ?? {})) {
    faults.set(operation as FaultOperation, settings);
  }
  const failProbability = options.progression?.outcome?.failProbability;
  if (failProbability !== undefined && !(failProbability >= 0 && failProbability <= 1)) {
    throw new SimulatorConfigError('progression.outcome.failProbability must be between 0 and 1');
  }
  const accounts = new AccountBook([...SEEDED_ACCOUNTS, ...(options.accounts ?? [])]);
  const outbox = new Outbox();
  const outgoing = new Outgoing(faults, log, nonNegative(options.deliveryTimeoutMs, 'deliveryTimeoutMs', DEFAULT_DELIVERY_TIMEOUT_MS));
  let rootUrl = '';
  const collectionOrderPath = options.collectionOrderPath ?? PAYOUT_PATHS.collectionOrder;
  if (!collectionOrderPath.startsWith('/') || collectionOrderPath.startsWith(KYC_PREFIX + '/')) {
    throw new SimulatorConfigError(`collectionOrderPath must start with / and not with ${KYC_PREFIX}/`);
  }
  const payout = new PayoutService(
    {
      signingProfile: options.signingProfile ?? DEFAULT_SIGNING_PROFILE,
      duplicateRule: options.duplicateRule ?? 'refuse',
      progression: {
        settleAfterMs: nonNegative(options.progression?.settleAfterMs, 'progression.settleAfterMs', 0),
        settleAfterChecks: nonNegative(options.progression?.settleAfterChecks, 'progression.settleAfterChecks', 0),
        outcome: options.progression?.outcome ?? {},
      },
      statusWords: { ...DEFAULT_STATUS_WORDS, ...(options.statusWords ?? {}) },
      bearerPrefixRequired: options.bearerPrefixRequired ?? true,
      notifyOnSettle: options.notifyOnSettle ?? true,
    },
    { random, faults, accounts, outbox, outgoing, log, baseUrl: () => rootUrl },
  );
  const kyc = new KycService(
    {
      mode: options.kyc?.mode ?? 'manual',
      stepDelayMs: nonNegative(options.kyc?.stepDelayMs, 'kyc.stepDelayMs', 50),
      decision: options.kyc?.decision ?? 'approved',
      rejectReferences: options.kyc?.rejectReferences ?? [],
    },
    { random, faults, outbox, outgoing, log, kycBaseUrl: () => rootUrl + KYC_PREFIX },
  );
  if (options.notificationUrl) payout.setNotificationUrl(options.notificationUrl);
  const admin = createAdmin({ payout, kyc, faults, accounts, outbox, outgoing });
  const held = new Set<ServerResponse>();
  const server = createServer(
    { keepAliveTimeout: 5000 },
    createRequestHandler({ routes: buildRoutes(payout, kyc, collectionOrderPath), admin, faults, log, held }),
  );
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(nonNegative(options.port, 'port', 0), host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  rootUrl = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  log.info('listening', { url: rootUrl, kycBaseUrl: rootUrl + KYC_PREFIX, seed: options.seed ?? 1 });

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      payout.stop();
      kyc.stop();
      for (const res of held) res.socket?.destroy();
      held.clear();
      await outgoing.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      log.info('stopped');
    })();
    return stopped;
  };

  return { url: rootUrl, payoutBaseUrl: rootUrl, kycBaseUrl: rootUrl + KYC_PREFIX, admin, stop };
}
