import type { OperatorEventStore } from '@shared/adapters/event-store';
import type { CollectionStore } from '@shared/ports/collections';
import type { KycRepository } from '@shared/adapters/kyc-repository';
import type { CachedSecret, KycSecret } from '@shared/adapters/secrets';
import type { PayoutStore } from '@shared/adapters/payout-repository';
import type { RetryDeps } from '@shared/app/retry-payout';
import type { DeadLetterQueue } from '@shared/ports/dead-letters';
import type { QuarantineStore } from '@shared/ports/quarantine';
import type { SigningSecrets } from '@shared/signing';
import type { KycServiceClient } from '@shared/providers/kyc-client';
import { operatorActor, operatorDepsFor, operatorName, targetFingerprints, targetSigningSecrets } from '../operator';
import { requireEnv, type Target } from '../target';
import { consoleLog } from './log';

/**
 * What the console reads and acts through: the same repositories and use cases as the CLI
 * commands, built once per start for one target. Nothing here holds a rule of its own.
 */
export interface ConsoleServices {
  readonly target: Target;
  readonly payouts: PayoutStore;
  readonly events: OperatorEventStore;
  /** Built on first use: on a stack without KYC (Target.kycNotDeployed) that use throws KycNotDeployedError. */
  readonly kyc: KycRepository;
  readonly collections: CollectionStore;
  /** Built on first use, as `kyc`. */
  readonly kycClient: KycServiceClient;
  /** What resolve and retry need (the CLI's `payouts resolve|retry` build the same), logging to the console's log. */
  readonly operator: RetryDeps;
  /** The payouts DLQ and queue, for the DLQ use cases. */
  readonly dlq: DeadLetterQueue;
  /** Order notifications whose signature matched no configured scheme. */
  readonly quarantine: QuarantineStore;
  /** The signing keys of the target's provider secret (calibration); throws when the secret is not set. */
  signingSecrets(): Promise<SigningSecrets>;
  /** The KYC app id from the target's KYC secret, or undefined when the secret is not set. */
  kycAppId(): Promise<string | undefined>;
  /** Messages in the dead-letter queue (SQS's approximate count, in flight included). */
  dlqDepth(): Promise<number>;
  /** Who acts when the form names nobody: the identity running the console (actor), as the CLI. */
  defaultOperator(): Promise<string>;
  /**
   * The identity running the console, recorded beside the name a form states: the AWS caller ARN for
   * a deployed stack, else `<os user>@<hostname>` (the CLI's operatorActor, resolved once per process).
   */
  actor(): Promise<string>;
  close(): void;
}

/**
 * Builds the services for a target whose env is already in process.env (the adapters create their
 * SDK clients from it at module load, so they are imported only here, after that).
 */
export async function createConsoleServices(target: Target): Promise<ConsoleServices> {
  const { createPayoutRepository } = await import('@shared/adapters/payout-repository');
  const { createEventStore } = await import('@shared/adapters/event-store');
  const { createKycRepository } = await import('@shared/adapters/kyc-repository');
  const { createCollectionRepository } = await import('@shared/adapters/collection-repository');
  const { createPayoutQueue } = await import('@shared/adapters/payout-queue');
  const { createDeadLetterQueue } = await import('@shared/adapters/dead-letter');
  const { createQuarantineStore } = await import('@shared/adapters/quarantine-store');
  const { cachedSecret, kycSecretSchema } = await import('@shared/adapters/secrets');
  const { KycServiceClient } = await import('@shared/providers/kyc-client');
  const queueUrl = requireEnv(target, 'PAYOUTS_QUEUE_URL');
  const dlq = createDeadLetterQueue(requireEnv(target, 'PAYOUTS_DLQ_URL'), queueUrl);
  // The KYC pieces are built when a KYC page first needs them, so that the console of a stack whose
  // stage leaves KYC out starts, and only its KYC pages say that KYC is not deployed there.
  let kycSecret: CachedSecret<KycSecret> | undefined;
  let kycClient: KycServiceClient | undefined;
  let kyc: KycRepository | undefined;
  const operator = await operatorDepsFor(target, consoleLog);
  return {
    target,
    payouts: createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME')),
    events: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }),
    get kyc() {
      kyc ??= createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') });
      return kyc;
    },
    collections: createCollectionRepository({ tableName: requireEnv(target, 'COLLECTIONS_TABLE_NAME') }),
    get kycClient() {
      kycClient ??= new KycServiceClient({ baseUrl: requireEnv(target, 'KYC_API_BASE_URL'), timeoutMs: 10_000 });
      return kycClient;
    },
    operator: { ...operator.deps, queue: createPayoutQueue(queueUrl), fingerprints: await targetFingerprints(target) },
    dlq,
    quarantine: createQuarantineStore({ tableName: requireEnv(target, 'QUARANTINE_TABLE_NAME') }),
    signingSecrets: () => targetSigningSecrets(target),
    async kycAppId() {
      const secret = (kycSecret ??= cachedSecret(requireEnv(target, 'KYC_SECRET_ID'), kycSecretSchema));
      try {
        return (await secret.get()).app_id;
      } catch {
        return undefined;
      }
    },
    dlqDepth: () => dlq.approximateCount(),
    defaultOperator: () => operatorName(target, undefined),
    actor: () => operatorActor(target),
    close() {
      kycClient?.close();
      operator.close();
    },
  };
}
