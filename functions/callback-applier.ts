import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent, ScheduledEvent } from 'aws-lambda';
import { createCollectionRepository } from '@shared/adapters/collection-repository';
import { createEventStore, eventFromStreamImage } from '@shared/adapters/event-store';
import { createKycRepository } from '@shared/adapters/kyc-repository';
import { createPayoutNudge } from '@shared/adapters/payout-nudge';
import { systemClock } from '@shared/adapters/system-clock';
import { telemetryFrom } from '@shared/adapters/telemetry';
import { applyCallbackBatch, sweepUnappliedCallbacks, type SweepResult } from '@shared/app/apply-callback';
import { callbackApplierEnvSchema } from '@shared/config/callback-applier';
import { loadConfig } from '@shared/config/env';
import { lambdaChain } from '@shared/observability/lambda-chain';
import { logger } from '@shared/observability/logger';
import { metrics } from '@shared/observability/metrics';

/*
 * The callback applier: applies stored callbacks after their 200. Two triggers, one use case: the
 * events table's stream (inserts of recognized events) and a schedule that sweeps the
 * not-yet-applied index for anything the stream left (locally, with no stream, the sweep alone).
 */

const config = loadConfig(callbackApplierEnvSchema);
const deps = {
  events: createEventStore({ tableName: config.EVENTS_TABLE_NAME }),
  subjects: createKycRepository({ tableName: config.KYC_TABLE_NAME }),
  payouts: createPayoutNudge(config.PAYOUTS_TABLE_NAME),
  collections: createCollectionRepository({ tableName: config.COLLECTIONS_TABLE_NAME }),
  clock: systemClock,
  log: logger,
  telemetry: telemetryFrom(metrics),
};
/** Time kept back from the Lambda time-out (at most half of what is left) so a sweep ends its last apply in time. */
const SWEEP_RESERVE_MS = 10_000;

async function lambdaHandler(event: DynamoDBStreamEvent | ScheduledEvent, context: Context): Promise<DynamoDBBatchResponse | SweepResult> {
  if (!('Records' in event)) {
    return sweepUnappliedCallbacks(deps, {
      graceMs: config.APPLY_SWEEP_GRACE_SECONDS * 1000,
      lateAfterMs: config.APPLY_LATE_AFTER_MINUTES * 60_000,
      budgetMs: context.getRemainingTimeInMillis() - Math.min(SWEEP_RESERVE_MS, context.getRemainingTimeInMillis() / 2),
    });
  }
  const batch = event.Records.flatMap((record) =>
    record.eventName === 'INSERT' && record.dynamodb?.NewImage
      ? [{ id: record.dynamodb.SequenceNumber ?? '', event: eventFromStreamImage(record.dynamodb.NewImage) }]
      : [],
  );
  const failed = await applyCallbackBatch(deps, batch);
  return { batchItemFailures: failed === undefined ? [] : [{ itemIdentifier: failed }] };
}

/** DynamoDB stream (partial batch failures reported) and EventBridge scheduled-rule handler. */
export const handler = lambdaChain(lambdaHandler);
