import { PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSBatchResponse, SQSEvent, ScheduledEvent } from 'aws-lambda';
import { createLambdaContext } from '@local/lambda';
import { startLocalAws, type LocalAws, type LocalAwsOptions } from '@local/emulators';
import { startSimulator, type SimulatorHandle, type SimulatorOptions, type PartnerCredentials } from '@simulator/index';
import { createPayoutRepository } from '@shared/adapters/payout-repository';
import type { PayoutRepository } from '@shared/ports/payouts';
import type { ReconcileSettings, ReconcileSummary } from '@shared/app/reconcile-payouts';
import { FUNCTIONS } from '@shared/config/functions';
import type { PayoutRequestInput } from '@shared/messages/payout-request';
import { sqsEventFromMessages } from '@test/factories/sqs-events';
import { takeAllMessages } from '@test/support/queues';

/*
 * Shared set-up of the payout integration tests: the simulator over HTTP, local AWS (dynalite,
 * fauxqs, the secrets stand-in) holding the simulator partner's keys, and the real handler modules
 * imported after process.env points at them.
 */

export const PARTNER_CODE = 'payrelay-it';
export const MERCHANT_ID = 'merchant-it-1';

/**
 * The reconciler's settings of the tests that build the use cases themselves: review after 60
 * minutes, 15 minutes of not-found grace without resubmission, SUBMITTING stale after 5 minutes.
 */
export const RECONCILE_SETTINGS: ReconcileSettings = {
  reviewAfterMs: 60 * 60_000,
  notFoundGraceMs: 15 * 60_000,
  resubmitUnknownNotFound: false,
  submitStaleMs: 5 * 60_000,
  concurrency: 4,
  pageSize: 10,
  budgetMs: 60_000,
};

export type WorkerHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;
export type ReconcilerHandler = (event: ScheduledEvent, context: Context) => Promise<ReconcileSummary>;

export interface Harness {
  sim: SimulatorHandle;
  aws: LocalAws;
  partner: PartnerCredentials;
  repository: PayoutRepository;
  sqs: SQSClient;
  /** Writes the partner's current keys from the simulator into the provider secret (a rotation). */
  rotateSecret(): Promise<void>;
  /** Writes another provider secret, as `payrelay secrets put provider` does (e.g. another merchant). */
  putProviderSecret(value: PartnerCredentials): Promise<void>;
  stop(): Promise<void>;
}

export async function startHarness(
  options: { simulator?: SimulatorOptions; aws?: LocalAwsOptions; env?: Record<string, string> } = {},
): Promise<Harness> {
  const sim = await startSimulator(options.simulator);
  const partner = sim.admin.createPartner({ partner_code: PARTNER_CODE, email: 'ops@payrelay.test', platform_merchant_id: MERCHANT_ID });
  const aws = await startLocalAws({ stage: 'it', ...options.aws, secrets: { provider: { ...partner }, kyc: undefined } });
  Object.assign(process.env, aws.env, {
    PAYOUT_API_BASE_URL: sim.payoutBaseUrl,
    KYC_API_BASE_URL: sim.kycBaseUrl,
    // Long enough that a loaded CI machine never turns a plain call into a timeout; the simulator's
    // timeout fault never answers, so only the tests that inject one wait this long.
    PROVIDER_TIMEOUT_MS: '2000',
    ...options.env,
  });
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: aws.endpoints.dynamodb, credentials }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const sqs = new SQSClient({ endpoint: aws.endpoints.sqs, credentials, useQueueUrlAsEndpoint: false });
  const secrets = new SecretsManagerClient({ endpoint: aws.endpoints.secretsManager, credentials });
  const putProviderSecret = async (value: PartnerCredentials): Promise<void> => {
    await secrets.send(new PutSecretValueCommand({ SecretId: aws.names.providerSecret, SecretString: JSON.stringify(value) }));
  };
  return {
    sim,
    aws,
    partner,
    repository: createPayoutRepository(aws.names.payoutsTable, doc),
    sqs,
    rotateSecret: () => putProviderSecret(sim.admin.credentials(PARTNER_CODE, MERCHANT_ID)),
    putProviderSecret,
    async stop() {
      sqs.destroy();
      secrets.destroy();
      doc.destroy();
      await sim.stop();
      await aws.stop();
    },
  };
}

/** Imports the real worker module (after the env is set). */
export async function loadWorker(): Promise<WorkerHandler> {
  return ((await import('@functions/payout-worker')) as { handler: WorkerHandler }).handler;
}

export async function loadReconciler(): Promise<ReconcilerHandler> {
  return ((await import('@functions/reconciler')) as { handler: ReconcilerHandler }).handler;
}

export const workerContext = (): Context => createLambdaContext(FUNCTIONS.payoutWorker, 'payrelay-it-payout-worker', 'eu-west-1');
export const reconcilerContext = (): Context => createLambdaContext(FUNCTIONS.reconciler, 'payrelay-it-reconciler', 'eu-west-1');
export const checkerContext = (): Context => createLambdaContext(FUNCTIONS.payoutChecker, 'payrelay-it-payout-checker', 'eu-west-1');

/** Imports the real payout checker module (after the env is set). */
export async function loadChecker(): Promise<WorkerHandler> {
  return ((await import('@functions/payout-checker')) as { handler: WorkerHandler }).handler;
}

let counter = 0;
/** A valid payout request to a seeded simulator account (Kwame Mensah, MTN, GHS). */
export function request(overrides: Partial<PayoutRequestInput> = {}): PayoutRequestInput {
  counter += 1;
  return {
    version: 1,
    platform_merchant_id: MERCHANT_ID,
    currency: 'GHS',
    withdrawal_reference: `wr-${process.pid}-${counter}`,
    amount: '25.50',
    account_number: '0244123456',
    account_code: 'MTN',
    expected_name: 'Kwame Mensah',
    ...overrides,
  };
}

export const identityOf = (r: PayoutRequestInput) => ({
  platform_merchant_id: r.platform_merchant_id,
  currency: r.currency,
  withdrawal_reference: r.withdrawal_reference,
});

/** Ledger entry of one reference in the simulator (undefined when the provider never saw a Payout for it). */
export function ledgerOf(sim: SimulatorHandle, reference: string) {
  return sim.admin.ledger().find((e) => e.withdrawal_reference === reference);
}

/**
 * The SQS event source mapping in miniature: receive from the payouts queue, invoke the worker,
 * delete what succeeded, leave failures to reappear after the visibility time-out. Stops when the
 * queue stays empty for a receive or after `maxRounds`.
 */
export async function pollQueue(harness: Harness, worker: WorkerHandler, maxRounds = 20): Promise<number> {
  let rounds = 0;
  for (; rounds < maxRounds; rounds++) {
    const out = await harness.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: harness.aws.queueUrls.payouts,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 2,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    const messages: Message[] = out.Messages ?? [];
    if (messages.length === 0) break;
    const response = await worker(sqsEventFromMessages(messages), workerContext());
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    for (const m of messages) {
      if (!failed.has(m.MessageId ?? '')) {
        await harness.sqs.send(new DeleteMessageCommand({ QueueUrl: harness.aws.queueUrls.payouts, ReceiptHandle: m.ReceiptHandle }));
      }
    }
  }
  return rounds;
}

export async function enqueue(harness: Harness, body: string): Promise<void> {
  await harness.sqs.send(new SendMessageCommand({ QueueUrl: harness.aws.queueUrls.payouts, MessageBody: body }));
}

/** Every message on the DLQ, with its attributes (received and deleted). */
export function drainDeadLetters(harness: Harness): Promise<Message[]> {
  return takeAllMessages(harness.sqs, harness.aws.queueUrls.deadLetter);
}

/** The invariant of every test: the provider executed each withdrawal_reference at most once. */
export function expectAtMostOneExecution(sim: SimulatorHandle): void {
  const over = sim.admin.ledger().filter((e) => e.executions > 1);
  if (over.length > 0) throw new Error(`double execution: ${JSON.stringify(over)}`);
}
