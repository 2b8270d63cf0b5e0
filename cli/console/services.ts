import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { OperatorEventStore } from '@shared/adapters/event-store';
import type { KycRepository } from '@shared/adapters/kyc-repository';
import type { PayoutStore } from '@shared/adapters/payout-repository';
import type { KycServiceClient } from '@shared/providers/kyc-client';
import { requireEnv, type Target } from '../target';

/**
 * What the console reads and acts through: the same repositories and use cases as the CLI
 * commands, built once per start for one target. Nothing here holds a rule of its own.
 */
export interface ConsoleServices {
  readonly target: Target;
  readonly payouts: PayoutStore;
  readonly events: OperatorEventStore;
  readonly kyc: KycRepository;
  readonly kycClient: KycServiceClient;
  /** The KYC app id from the target's KYC secret, or undefined when the secret is not set. */
  kycAppId(): Promise<string | undefined>;
  /** Messages waiting in the dead-letter queue (SQS's approximate count). */
  dlqDepth(): Promise<number>;
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
  const { sqsClient } = await import('@shared/adapters/aws-clients');
  const { cachedSecret, kycSecretSchema } = await import('@shared/adapters/secrets');
  const { KycServiceClient } = await import('@shared/providers/kyc-client');
  const dlqUrl = requireEnv(target, 'PAYOUTS_DLQ_URL');
  const kycSecret = cachedSecret(requireEnv(target, 'KYC_SECRET_ID'), kycSecretSchema);
  const kycClient = new KycServiceClient({ baseUrl: requireEnv(target, 'KYC_API_BASE_URL'), timeoutMs: 10_000 });
  return {
    target,
    payouts: createPayoutRepository(requireEnv(target, 'PAYOUTS_TABLE_NAME')),
    events: createEventStore({ tableName: requireEnv(target, 'EVENTS_TABLE_NAME') }),
    kyc: createKycRepository({ tableName: requireEnv(target, 'KYC_TABLE_NAME') }),
    kycClient,
    async kycAppId() {
      try {
        return (await kycSecret.get()).app_id;
      } catch {
        return undefined;
      }
    },
    async dlqDepth() {
      const out = await sqsClient.send(
        new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0);
    },
    close() {
      kycClient.close();
    },
  };
}
