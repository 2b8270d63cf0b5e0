import type { Payout } from '@shared/domain/payout';
import { METRIC } from '@shared/observability/metric-names';
import type { Telemetry } from '@shared/ports/runtime';

/** Emits the metric of a final state (or of an unknown outcome); one place for worker and reconciler. */
export function countOutcome(telemetry: Telemetry, payout: Payout): void {
  const metric = {
    SUCCEEDED: METRIC.payoutSucceeded,
    FAILED: METRIC.payoutFailed,
    REJECTED: METRIC.payoutRejected,
    NEEDS_REVIEW: METRIC.payoutNeedsReview,
    REVERSED: METRIC.payoutReversed,
    UNKNOWN: METRIC.payoutUnknownOutcome,
  }[payout.state as string];
  if (metric) telemetry.count(metric);
}
