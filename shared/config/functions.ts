/**
 * The Lambda functions and HTTP routes of payrelay. The CDK app and the local stack both read this,
 * so the local gateway serves exactly the routes the deployed API has, with the same handler modules.
 */

export interface FunctionDefinition {
  /** Logical id and file name under functions/ (kebab-case). */
  readonly id: 'payout-worker' | 'reconciler' | 'payout-checker' | 'kyc-callback' | 'payout-notification' | 'callback-applier' | 'kyc-catch-up';
  /** Path of the handler module from the repository root; the module exports `handler`. */
  readonly entry: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  /** Whether the function calls the payout or KYC provider (and so needs the static egress IPs). */
  readonly callsProvider: boolean;
}

export const FUNCTIONS = {
  payoutWorker: { id: 'payout-worker', entry: 'functions/payout-worker.ts', timeoutSeconds: 60, memoryMb: 512, callsProvider: true },
  reconciler: { id: 'reconciler', entry: 'functions/reconciler.ts', timeoutSeconds: 120, memoryMb: 512, callsProvider: true },
  payoutChecker: { id: 'payout-checker', entry: 'functions/payout-checker.ts', timeoutSeconds: 60, memoryMb: 512, callsProvider: true },
  kycCallback: { id: 'kyc-callback', entry: 'functions/kyc-callback.ts', timeoutSeconds: 10, memoryMb: 256, callsProvider: false },
  payoutNotification: { id: 'payout-notification', entry: 'functions/payout-notification.ts', timeoutSeconds: 10, memoryMb: 256, callsProvider: false },
  callbackApplier: { id: 'callback-applier', entry: 'functions/callback-applier.ts', timeoutSeconds: 60, memoryMb: 256, callsProvider: false },
} as const satisfies Record<string, FunctionDefinition>;

/**
 * The scheduled KYC catch-up: deployed only when the stage sets `kycCatchUp`, so it is not in
 * FUNCTIONS (every function there is always deployed, served locally and benchmarked). Its time-out
 * covers a long /responses answer: one conditional write per callback in the look-back window.
 */
export const KYC_CATCH_UP_FUNCTION = {
  id: 'kyc-catch-up',
  entry: 'functions/kyc-catch-up.ts',
  timeoutSeconds: 300,
  memoryMb: 512,
  callsProvider: true,
} as const satisfies FunctionDefinition;

export interface RouteDefinition {
  readonly method: 'POST';
  /** HTTP API route path; `{name}` segments become pathParameters. */
  readonly path: string;
  readonly functionId: FunctionDefinition['id'];
}

export const ROUTES: readonly RouteDefinition[] = [
  { method: 'POST', path: '/callbacks/kyc/{token}', functionId: 'kyc-callback' },
  { method: 'POST', path: '/callbacks/payout-notifications', functionId: 'payout-notification' },
];

/** How often the local stack sweeps stored callbacks into the applier while it finds some (no DynamoDB stream locally). */
export const LOCAL_APPLY_EVERY_MS = 100;

/** The longest wait of the local sweep when idle: each sweep that finds nothing doubles the wait up to this. */
export const LOCAL_APPLY_IDLE_MAX_MS = 2000;

/** How often the deployed callback applier sweeps for events the stream left unapplied, in minutes. */
export const APPLY_SWEEP_EVERY_MINUTES = 5;

/** How often the scheduled reconciler runs, in minutes. */
export const DEFAULT_RECONCILE_EVERY_MINUTES = 1;
