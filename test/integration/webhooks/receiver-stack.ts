import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { startGateway, type GatewayHandle } from '@local/gateway';
import { loadFunction, type LocalFunction } from '@local/lambda';
import { startCallbackApplier, type SchedulerHandle } from '@local/scheduler';
import { startLocalAws, type LocalAws } from '@local/emulators';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { createKycOrder } from '@shared/app/create-kyc-order';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import { FUNCTIONS, ROUTES } from '@shared/config/functions';
import { payoutKey, type PayoutIdentity } from '@shared/domain/identity';
import { Payout } from '@shared/domain/payout';
import { KycServiceClient } from '@shared/providers/kyc-client';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '@simulator/index';
import { lambdaContext } from '@test/factories/http-events';
import { silentLog } from '@test/factories/ports';

/** A fixed, test-only callback token (the KYC secret's `callback_token`). */
export const CALLBACK_TOKEN = 'test-callback-token-0123456789abcdef';

type HttpHandler = (event: APIGatewayProxyEventV2, context: ReturnType<typeof lambdaContext>) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Everything the receiver tests need, all real and on loopback: the provider simulator, a verified
 * KYC app on it, a partner on the payout service, dynalite and the secrets stand-in with those
 * secrets, both handler modules, and the local HTTP API gateway in front of them (so the
 * simulator's own POSTs reach the handlers as HTTP API v2 events).
 */
export interface ReceiverStack {
  sim: SimulatorHandle;
  local: LocalAws;
  gateway: GatewayHandle;
  appId: string;
  partner: { partner_public_key: string; partner_secret_key: string; merchant_secret_key: string; partner_id: string; platform_merchant_id: string };
  kycClient: KycServiceClient;
  doc: DynamoDBDocumentClient;
  kycCallback: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
  payoutNotification: (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;
  /** The callback applier, driven as in `npm start` (startCallbackApplier, nudged by the gateway after each stored callback). */
  applier: SchedulerHandle;
  /** Applies every callback stored so far (a sweep that starts now) and waits for it: call it after a 200 before reading its effect. */
  applyNow(): Promise<void>;
  /** Every item of a table (tests only: small tables). */
  scan(tableName: string): Promise<Array<Record<string, unknown>>>;
  /** Creates an individual KYC order (Ama Mensah) through the use case; its callbacks come to the local gateway. Returns the order id. */
  order(reference: string): Promise<string>;
  /** Replaces the provider secret value (after a key reset). */
  putProviderSecret(value: object): Promise<void>;
  stop(): Promise<void>;
}

export async function startReceiverStack(options: { stage: string; simulator?: SimulatorOptions; env?: Record<string, string> }): Promise<ReceiverStack> {
  const sim = await startSimulator(options.simulator);
  // Generous: the KYC chaos test opens 80 orders at once, and a loaded CI machine is slow, not wrong.
  const kycClient = new KycServiceClient({ baseUrl: sim.kycBaseUrl, timeoutMs: 30_000 });
  const registered = await kycClient.registerApp({ name: 'payrelay-test', email: `kyc-${options.stage}@example.test`, origin: ['localhost'] });
  const appId = String((registered.app as { _id: string })._id);
  await kycClient.verifyApp({ email: `kyc-${options.stage}@example.test`, code: String(registered.value) });
  const partner = sim.admin.createPartner({ partner_code: `P-${options.stage}`, email: `partner-${options.stage}@example.test` });

  const local = await startLocalAws({
    stage: options.stage,
    secrets: { kyc: { app_id: appId, callback_token: CALLBACK_TOKEN }, provider: { ...partner } },
  });
  Object.assign(process.env, local.env, { APPLY_SWEEP_GRACE_SECONDS: '0' }, options.env ?? {});
  // Handlers read their configuration at module load: import them only now.
  // The guard adds the parsed body to the event, hence the handlers' wider event type.
  const kycModule = (await import('@functions/kyc-callback')) as unknown as { handler: HttpHandler };
  const notificationModule = (await import('@functions/payout-notification')) as unknown as { handler: HttpHandler };
  const kycCallback = (event: APIGatewayProxyEventV2) => kycModule.handler(event, lambdaContext('kyc-callback'));
  const payoutNotification = (event: APIGatewayProxyEventV2) => notificationModule.handler(event, lambdaContext('payout-notification'));

  const asLocal = (definition: (typeof FUNCTIONS)[keyof typeof FUNCTIONS], invoke: (e: APIGatewayProxyEventV2) => Promise<unknown>): LocalFunction => ({
    definition,
    name: definition.id,
    invoke: <R>(event: unknown) => invoke(event as APIGatewayProxyEventV2) as Promise<R>,
  });
  const applierFunction = await loadFunction(FUNCTIONS.callbackApplier, { stage: options.stage, region: local.env.AWS_REGION as string });
  const applier = startCallbackApplier({ fn: applierFunction, region: local.env.AWS_REGION as string });
  const gateway = await startGateway({
    onStored: () => applier.nudge(),
    port: 0,
    routes: ROUTES,
    functions: new Map([
      [FUNCTIONS.kycCallback.id, asLocal(FUNCTIONS.kycCallback, kycCallback)],
      [FUNCTIONS.payoutNotification.id, asLocal(FUNCTIONS.payoutNotification, payoutNotification)],
    ]),
  });
  sim.admin.setNotificationUrl(`${gateway.url}/callbacks/payout-notifications`);

  const clientConfig = { region: local.env.AWS_REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ ...clientConfig, endpoint: local.endpoints.dynamodb }));
  const secrets = new SecretsManagerClient({ ...clientConfig, endpoint: local.endpoints.secretsManager });

  return {
    sim,
    local,
    gateway,
    appId,
    partner,
    kycClient,
    doc,
    kycCallback,
    payoutNotification,
    applier,
    applyNow: () => applier.runNow(),
    async scan(tableName) {
      const out = await doc.send(new ScanCommand({ TableName: tableName }));
      return out.Items ?? [];
    },
    async order(reference) {
      const created = await createKycOrder(
        {
          kyc: kycClient,
          orders: createKycRepository({ tableName: local.names.kycTable, client: doc }),
          secret: { get: async () => ({ app_id: appId, callback_token: CALLBACK_TOKEN }) },
          apiBaseUrl: gateway.url,
          clock: { now: () => new Date() },
          log: silentLog,
        },
        { kind: 'individual', reference, full_name: 'Ama Mensah', email: 'ama@example.test', phone: '+233244000000' },
      );
      return created.orderId;
    },
    async putProviderSecret(value) {
      await secrets.send(new PutSecretValueCommand({ SecretId: local.names.providerSecret, SecretString: JSON.stringify(value) }));
    },
    async stop() {
      await applier.stop();
      await gateway.close();
      kycClient.close();
      await sim.stop();
      doc.destroy();
      secrets.destroy();
      await local.stop();
    },
  };
}

/** Parsed JSON body of a handler result. */
export function bodyOf(result: APIGatewayProxyStructuredResultV2): Record<string, unknown> {
  return JSON.parse(result.body ?? '{}') as Record<string, unknown>;
}

/** The identity of a payout of the stack's partner in GHS. */
export function payoutIdentity(stack: ReceiverStack, reference: string): PayoutIdentity {
  return { platform_merchant_id: stack.partner.platform_merchant_id, currency: 'GHS', withdrawal_reference: reference };
}

/** A payout payrelay knows (ACCEPTED, its first check a while away); the provider knows nothing of it. */
export async function knownPayout(stack: ReceiverStack, reference: string, amount = '10.00'): Promise<void> {
  const repo = createPayoutRepository(stack.local.names.payoutsTable, stack.doc);
  await repo.createAccepted(
    Payout.accept({ identity: payoutIdentity(stack, reference), amount, accountMasked: '******3456', accountCode: 'MTN' }, new Date()),
  );
}

/** The payouts-table item of a payout of the stack's partner. */
export async function payoutItem(stack: ReceiverStack, reference: string): Promise<Record<string, unknown> | undefined> {
  const out = await stack.doc.send(
    new GetCommand({ TableName: stack.local.names.payoutsTable, Key: { pk: payoutKey(payoutIdentity(stack, reference)) } }),
  );
  return out.Item;
}
