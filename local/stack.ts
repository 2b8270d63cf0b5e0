import { SQSClient } from '@aws-sdk/client-sqs';
import { DEFAULT_RECONCILE_EVERY_MINUTES, FUNCTIONS, ROUTES } from '@shared/config/functions';
import { PAYOUTS_QUEUE } from '@shared/config/resources';
import type { KycSecret, ProviderSecret } from '@shared/adapters/secrets';
import { KycServiceClient } from '@shared/providers/kyc-client';
import { startSimulator, type SimulatorHandle } from '@simulator/index';
import { startLocalAws, type LocalAws } from './emulators';
import { loadLocalConfig, type LocalConfig } from './config';
import { startGateway, type GatewayHandle } from './gateway';
import { HandlerLoadError, loadFunction, type LocalFunction } from './lambda';
import { startCallbackApplier, startScheduler, type SchedulerHandle } from './scheduler';
import { startSqsPoller, type SqsPollerHandle } from './sqs-poller';
import { StateFileInUseError, assertStateFileFree, removeLocalState, writeLocalState, type LocalStackUrls } from './state';

/** Options of {@link startLocalStack}; anything left out comes from local/config.json. */
export interface LocalStackOptions {
  /** A parsed local config; defaults to local/config.json. */
  readonly config?: LocalConfig;
  /** 0 picks a free port (tests). */
  readonly gatewayPort?: number;
  readonly simulatorPort?: number;
  /** Another payout service instead of the simulator; its credentials come from config.external.provider. */
  readonly providerUrl?: string;
  /** Another KYC service instead of the simulator; its app id comes from config.external.kyc. */
  readonly kycUrl?: string;
  /** Reconciler schedule; defaults to config.reconcileEverySeconds, else the deployed schedule. */
  readonly reconcileEveryMs?: number;
  readonly visibilityTimeoutSeconds?: number;
  readonly maxReceiveCount?: number;
  /** Concurrent SQS batches (the event source mapping's scaling); default 1. */
  readonly pollerConcurrency?: number;
  /** Long-poll wait per receive; default 20 s like the event source mapping. */
  readonly pollWaitSeconds?: number;
  /** Extra handler env (e.g. KYC_GATING=on); wins over config.handlerEnv and the shell. */
  readonly handlerEnv?: Record<string, string>;
  /** Options passed to the simulator's startSimulator (faults, seed, delays). */
  readonly simulatorOptions?: Record<string, unknown>;
  /** Write .payrelay-local/state.json so the CLI finds this stack (npm start does; tests don't). */
  readonly writeStateFile?: boolean;
  /** Where the local stack's own lines go (access log, poller, scheduler). */
  readonly log?: (line: string) => void;
}

/** A running local stack. */
export interface LocalStack {
  readonly stage: string;
  readonly urls: LocalStackUrls;
  /** The env the handlers run with (emulator endpoints, names, provider URLs); also set in process.env. */
  readonly env: Record<string, string>;
  readonly names: LocalAws['names'];
  readonly queueUrls: LocalAws['queueUrls'];
  /** The in-process simulator, when the stack runs it (faults, ledger, outbox). */
  readonly simulator?: SimulatorHandle;
  /** The provider credentials the stack seeded (simulator partner or config.external). */
  readonly providerSecret?: ProviderSecret;
  readonly kycSecret?: KycSecret;
  readonly poller: SqsPollerHandle;
  readonly scheduler: SchedulerHandle;
  /** Drives the callback applier (dynalite has no streams): nudged by the gateway after each stored callback, plus a sweep that backs off when idle. */
  readonly applier: SchedulerHandle;
  /** Invokes the reconciler now, outside its schedule, and waits for it. */
  reconcileNow(): Promise<void>;
  /** Applies every stored callback not yet applied, now, and waits for it. */
  applyNow(): Promise<void>;
  stop(): Promise<void>;
}

/** The reconciler interval of a config: its own, else the deployed schedule. */
export function reconcileEverySeconds(config: LocalConfig): number {
  return config.reconcileEverySeconds ?? DEFAULT_RECONCILE_EVERY_MINUTES * 60;
}

/** Thrown when the local stack cannot start; the message says which part and why. */
export class LocalStackError extends Error {
  override name = 'LocalStackError';
}

const KYC_CALLBACK_PATH = '/callbacks/kyc/';
const PAYOUT_NOTIFICATION_PATH = '/callbacks/payout-notifications';

function completeOrUndefined<T extends Record<string, string>>(record: Record<string, string>, fields: readonly string[]): T | undefined {
  return fields.every((f) => (record[f] ?? '').length > 0) ? (record as T) : undefined;
}

/** Registers and verifies the local KYC app on the KYC service (the simulator), returning its id. */
async function registerKycApp(kycApiUrl: string, app: LocalConfig['kycApp']): Promise<string> {
  const client = new KycServiceClient({ baseUrl: kycApiUrl, timeoutMs: 5000 });
  const registered = await client.registerApp({ name: app.name, email: app.email, origin: app.origin });
  await client.verifyApp({ email: app.email, code: registered.value });
  return registered.app._id;
}

/**
 * Starts the whole system on 127.0.0.1: local AWS (dynalite, fauxqs, the local Secrets Manager
 * stand-in), the provider simulator (unless both provider URLs point elsewhere), the HTTP gateway
 * serving ROUTES, the SQS poller driving the worker, the scheduler driving the reconciler, and the
 * callback applier (startCallbackApplier), nudged by the gateway after each stored callback.
 *
 * Handlers read their env at module load, so this sets process.env before importing them; run one
 * local stack per process.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const config = options.config ?? loadLocalConfig();
  const stage = config.stage;
  const log = options.log ?? (() => {});
  // Before anything starts: never take over the state file of a live stack.
  if (options.writeStateFile) assertStateFileFree();
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        log(`stop: ${(error as Error).message}`);
      }
    }
  };

  try {
    let simulator: SimulatorHandle | undefined;
    if (!options.providerUrl || !options.kycUrl) {
      simulator = await startSimulator({
        ...config.simulator,
        ...options.simulatorOptions,
        port: options.simulatorPort ?? config.simulatorPort,
      });
      const sim = simulator;
      stops.push(() => sim.stop());
    }
    const payoutApi = options.providerUrl ?? (simulator as SimulatorHandle).payoutBaseUrl;
    const kycApi = options.kycUrl ?? (simulator as SimulatorHandle).kycBaseUrl;

    let providerSecret: ProviderSecret | undefined;
    if (options.providerUrl) {
      providerSecret = completeOrUndefined<ProviderSecret>(config.external.provider, [
        'partner_public_key',
        'partner_secret_key',
        'merchant_secret_key',
        'partner_id',
        'platform_merchant_id',
      ]);
    } else {
      const credentials = await (simulator as SimulatorHandle).admin.createPartner({
        partner_code: config.partner.partner_code,
        email: config.partner.email,
        ...(config.partner.platform_merchant_id ? { platform_merchant_id: config.partner.platform_merchant_id } : {}),
      });
      providerSecret = {
        partner_public_key: credentials.partner_public_key,
        partner_secret_key: credentials.partner_secret_key,
        merchant_secret_key: credentials.merchant_secret_key,
        partner_id: credentials.partner_id,
        platform_merchant_id: credentials.platform_merchant_id,
      };
    }
    const appId = options.kycUrl ? config.external.kyc.app_id : await registerKycApp(kycApi, config.kycApp);
    const kycSecret: KycSecret | undefined = appId ? { app_id: appId, callback_token: config.kycCallbackToken } : undefined;

    const maxReceiveCount = options.maxReceiveCount ?? PAYOUTS_QUEUE.defaultMaxReceiveCount;
    const aws = await startLocalAws({
      stage,
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds ?? config.visibilityTimeoutSeconds,
      maxReceiveCount,
      secrets: { ...(providerSecret ? { provider: providerSecret } : {}), ...(kycSecret ? { kyc: kycSecret } : {}) },
    });
    stops.push(() => aws.stop());

    const reconcileEveryMs = options.reconcileEveryMs ?? reconcileEverySeconds(config) * 1000;
    // The shell wins over config.handlerEnv (so `PROVIDER_TIMEOUT_MS=... npm start` works); explicit options win over both.
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(config.handlerEnv)) env[key] = process.env[key] ?? value;
    Object.assign(
      env,
      aws.env,
      // The worker sends a record to the DLQ itself on the last receive the queue allows, so it must know the count.
      { PAYOUT_API_BASE_URL: payoutApi, KYC_API_BASE_URL: kycApi, PAYOUTS_MAX_RECEIVE_COUNT: String(maxReceiveCount) },
      // No stream locally: the applier's sweep is the only driver, so it takes events of any age.
      { APPLY_SWEEP_GRACE_SECONDS: '0' },
      // The reconciler counts the review gauge once per window of its schedule, which here is the local one.
      { RECONCILE_EVERY_MINUTES: String(reconcileEveryMs / 60_000) },
      options.handlerEnv,
    );
    Object.assign(process.env, env);

    const functions = new Map<string, LocalFunction>();
    const region = aws.env.AWS_REGION as string;
    for (const definition of Object.values(FUNCTIONS)) {
      functions.set(definition.id, await loadFunction(definition, { stage, region, onSlow: log }));
    }
    const fn = (id: string): LocalFunction => functions.get(id) as LocalFunction;

    const applier = startCallbackApplier({ fn: fn(FUNCTIONS.callbackApplier.id), region, log });
    stops.push(() => applier.stop());
    const gateway: GatewayHandle = await startGateway({
      port: options.gatewayPort ?? config.gatewayPort,
      routes: ROUTES,
      functions,
      log,
      onStored: () => applier.nudge(),
    });
    stops.push(() => gateway.close());
    const urls: LocalStackUrls = {
      gateway: gateway.url,
      kycCallback: `${gateway.url}${KYC_CALLBACK_PATH}${config.kycCallbackToken}`,
      payoutNotification: `${gateway.url}${PAYOUT_NOTIFICATION_PATH}`,
      payoutApi,
      kycApi,
      ...(simulator ? { simulator: simulator.url } : {}),
    };
    if (simulator) await simulator.admin.setNotificationUrl(urls.payoutNotification);

    const sqs = new SQSClient({
      region,
      endpoint: aws.env.AWS_ENDPOINT_URL_SQS,
      credentials: { accessKeyId: aws.env.AWS_ACCESS_KEY_ID as string, secretAccessKey: aws.env.AWS_SECRET_ACCESS_KEY as string },
      useQueueUrlAsEndpoint: false,
    });
    stops.push(async () => sqs.destroy());
    const poller = await startSqsPoller({
      sqs,
      queueUrl: aws.queueUrls.payouts,
      fn: fn(FUNCTIONS.payoutWorker.id),
      region,
      waitSeconds: options.pollWaitSeconds ?? 20,
      concurrency: options.pollerConcurrency ?? 1,
      log,
    });
    stops.push(() => poller.stop());
    // The delayed checks, as the checks queue's event source mapping delivers them.
    const checkPoller = await startSqsPoller({
      sqs,
      queueUrl: aws.queueUrls.checks,
      fn: fn(FUNCTIONS.payoutChecker.id),
      region,
      waitSeconds: options.pollWaitSeconds ?? 20,
      concurrency: 1,
      log,
    });
    stops.push(() => checkPoller.stop());
    const scheduler = startScheduler({
      fn: fn(FUNCTIONS.reconciler.id),
      everyMs: reconcileEveryMs,
      region,
      log,
    });
    stops.push(() => scheduler.stop());

    if (options.writeStateFile) {
      // Checked again: another stack may have started while this one did.
      assertStateFileFree();
      writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage, urls, env });
      stops.push(async () => removeLocalState(process.pid));
    }

    return {
      stage,
      urls,
      env,
      names: aws.names,
      queueUrls: aws.queueUrls,
      ...(simulator ? { simulator } : {}),
      ...(providerSecret ? { providerSecret } : {}),
      ...(kycSecret ? { kycSecret } : {}),
      poller,
      scheduler,
      applier,
      reconcileNow: () => scheduler.runNow(),
      applyNow: () => applier.runNow(),
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    if (error instanceof LocalStackError || error instanceof StateFileInUseError) throw error;
    const e = error as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      throw new LocalStackError(`a port is already in use (${e.message}); is another npm start running? Pick others with --port / --simulator-port`);
    }
    // A handler that cannot load already says which one and why (its configuration); another error keeps its class name.
    const why = error instanceof HandlerLoadError ? e.message : `${e.name}: ${e.message}`;
    throw new LocalStackError(`the local stack could not start: ${why}`);
  }
}
