import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startLocalAws } from '@local/emulators';
import type { KycSecret, ProviderSecret } from '@shared/adapters/secrets';
import { startSimulator, type FaultOperation, type LedgerEntry, type OperationFaults, type SimulatorOptions } from '@simulator/index';
import { watchProviderCalls, type ProviderCallTimes } from './provider-calls';

/*
 * The emulators (dynalite, fauxqs, the secrets stand-in and, when asked, the provider simulator) run
 * in a process of their own. In production DynamoDB and the provider are other machines; in one
 * process their CPU time would land inside the handler's timings and serialize on one event loop.
 */

const HOST_ENV = 'PAYRELAY_BENCH_EMULATOR_HOST';

export interface EmulatorConfig {
  readonly stage: string;
  readonly provider?: ProviderSecret;
  readonly kyc?: KycSecret;
  /** Start the simulator, create a partner on it and use its credentials as the provider secret. */
  readonly simulator?: SimulatorOptions;
}

export interface Emulators {
  /** AWS_ENDPOINT_URL_* and the resource names (startLocalAws().env), plus PAYOUT_API_BASE_URL with a simulator. */
  readonly env: Record<string, string>;
  readonly provider?: ProviderSecret;
  readonly simulatorUrl?: string;
  /** The host process's id (a part may read its CPU time from /proc). */
  readonly pid: number;
  /** The simulator's ledger (executions per payout). */
  ledger(): Promise<LedgerEntry[]>;
  /** Replaces the simulator's faults of one operation. */
  setFaults(operation: FaultOperation, faults: OperationFaults): Promise<void>;
  /** When the simulator finished each AccountVerification and Payout answer since the last call (the host's clock). */
  providerAnswers(): Promise<ProviderCallTimes>;
  stop(): Promise<void>;
}

type HostMessage =
  | { type: 'ready'; env: Record<string, string>; provider?: ProviderSecret; simulatorUrl?: string }
  | { type: 'reply'; id: number; value: unknown }
  | { type: 'failed'; message: string };

/** Requests to the host: each gets one reply with the same id. */
type HostRequest =
  | { id: number; type: 'ledger' }
  | { id: number; type: 'faults'; operation: FaultOperation; faults: OperationFaults }
  | { id: number; type: 'answers' };
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

/** Starts the emulators in a child process and waits until their resources exist. */
export function startEmulators(config: EmulatorConfig): Promise<Emulators> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, [HOST_ENV]: JSON.stringify(config) },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const pending = new Map<number, (value: unknown) => void>();
    let nextId = 0;
    const ask = <T>(request: WithoutId<HostRequest>): Promise<T> =>
      new Promise((done) => {
        const id = nextId++;
        pending.set(id, done as (value: unknown) => void);
        child.send({ ...request, id });
      });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.on('message', (message: HostMessage) => {
      if (message.type === 'failed') reject(new Error(`emulators did not start: ${message.message}`));
      if (message.type === 'reply') {
        pending.get(message.id)?.(message.value);
        pending.delete(message.id);
      }
      if (message.type !== 'ready') return;
      resolve({
        env: message.env,
        provider: message.provider,
        simulatorUrl: message.simulatorUrl,
        pid: child.pid as number,
        ledger: () => ask<LedgerEntry[]>({ type: 'ledger' }),
        setFaults: (operation, faults) => ask<void>({ type: 'faults', operation, faults }),
        providerAnswers: () => ask<ProviderCallTimes>({ type: 'answers' }),
        async stop() {
          if (child.connected) child.disconnect();
          await exited;
        },
      });
    });
    child.once('exit', (code) => reject(new Error(`emulator host exited with ${code}`)));
  });
}

async function host(config: EmulatorConfig): Promise<void> {
  const send = (message: HostMessage): void => {
    process.send?.(message);
  };
  try {
    let provider = config.provider;
    const sim = config.simulator ? await startSimulator(config.simulator) : undefined;
    const answers = sim ? watchProviderCalls('answered') : undefined;
    if (sim) {
      const p = sim.admin.createPartner({ partner_code: `P-${config.stage}`, email: `${config.stage}@example.test` });
      provider = {
        partner_public_key: p.partner_public_key,
        partner_secret_key: p.partner_secret_key,
        merchant_secret_key: p.merchant_secret_key,
        partner_id: p.partner_id,
        platform_merchant_id: p.platform_merchant_id,
      };
    }
    const local = await startLocalAws({
      stage: config.stage,
      secrets: { ...(provider ? { provider: { ...provider } } : {}), ...(config.kyc ? { kyc: { ...config.kyc } } : {}) },
    });
    process.on('message', (request: HostRequest) => {
      if (request.type === 'ledger') send({ type: 'reply', id: request.id, value: sim ? sim.admin.ledger() : [] });
      if (request.type === 'faults') {
        sim?.admin.setFaults(request.operation, request.faults);
        send({ type: 'reply', id: request.id, value: null });
      }
      if (request.type === 'answers') send({ type: 'reply', id: request.id, value: answers?.take() ?? { verification: [], payout: [] } });
    });
    process.on('disconnect', () => {
      void Promise.allSettled([local.stop(), sim?.stop()]).then(() => process.exit(0));
    });
    send({
      type: 'ready',
      env: { ...local.env, ...(sim ? { PAYOUT_API_BASE_URL: sim.payoutBaseUrl, KYC_API_BASE_URL: sim.kycBaseUrl } : {}) },
      provider,
      simulatorUrl: sim?.url,
    });
  } catch (error) {
    send({ type: 'failed', message: (error as Error).message });
    process.exit(1);
  }
}

if (process.env[HOST_ENV]) await host(JSON.parse(process.env[HOST_ENV]) as EmulatorConfig);
