/**
 * Metric names shared by the emitters (handlers, use cases) and the alarms and dashboard (infra).
 * All are emitted in the `Payrelay` namespace with the Powertools default dimension `service`.
 */
export const METRIC = {
  payoutSucceeded: 'PayoutSucceeded',
  payoutFailed: 'PayoutFailed',
  payoutRejected: 'PayoutRejected',
  /** One per payout handed to a person (an event: see payoutsAwaitingReview for how many still wait). */
  payoutNeedsReview: 'PayoutNeedsReview',
  /**
   * A gauge: how many payouts are in NEEDS_REVIEW, counted by a reconciler run once per
   * REVIEW_GAUGE_EVERY_MINUTES. Never published when the count failed (a 0 would clear its alarm).
   */
  payoutsAwaitingReview: 'PayoutsAwaitingReview',
  /**
   * Beside that gauge, from the same run and only when its count was published: how long the payout
   * that has waited longest in NEEDS_REVIEW has waited, in seconds since its last change (which a
   * payout keeps while it waits for a person), 0 when none waits. Never published when its read failed.
   */
  oldestPayoutAwaitingReviewSeconds: 'OldestPayoutAwaitingReviewSeconds',
  payoutReversed: 'PayoutReversed',
  payoutUnknownOutcome: 'PayoutUnknownOutcome',
  nameMismatch: 'NameMismatch',
  dlqSend: 'DlqSend',
  reconcileLagSeconds: 'ReconcileLagSeconds',
  oldestUnknownAgeSeconds: 'OldestUnknownAgeSeconds',
  /** One per reconciler run that finished (the heartbeat alarm fires when none arrives for 3 intervals). */
  reconcileRunCompleted: 'ReconcileRunCompleted',
  /** One per worker batch in which every record failed (a queue that makes no progress at all). */
  workerBatchFailed: 'WorkerBatchFailed',
  webhookStored: 'WebhookStored',
  webhookDuplicate: 'WebhookDuplicate',
  webhookUnauthorized: 'WebhookUnauthorized',
  webhookUnrecognized: 'WebhookUnrecognized',
  kycDecisionChanged: 'KycDecisionChanged',
  /** A collection's final order status contradicted by a later notification (COMPLETED, then EXPIRED): alarmed. */
  collectionStatusContradicted: 'CollectionStatusContradicted',
  /** A stored callback applied (after its 200) and recorded as applied. */
  callbackApplied: 'CallbackApplied',
  /** Seconds from a callback's storing (its 200) to its apply being recorded. */
  callbackApplyLagSeconds: 'CallbackApplyLagSeconds',
  /** Callbacks the sweep found stored but unapplied for longer than APPLY_LATE_AFTER_MINUTES (alarmed). */
  callbacksAppliedLate: 'CallbacksAppliedLate',
  /** KYC callbacks a catch-up found at the KYC service but not stored here: each was a missed delivery. */
  kycCallbacksRecovered: 'KycCallbacksRecovered',
  /** An order notification with the partner key but a signature no configured scheme reproduces, kept in the quarantine. */
  notificationQuarantined: 'NotificationQuarantined',
  /** Such a notification not kept because the quarantine already holds QUARANTINE_MAX_PER_HOUR this hour. */
  quarantineFull: 'QuarantineFull',
} as const;

/**
 * The window of the UNKNOWN-age alarm. A reconciler run reports the age of the oldest UNKNOWN payout
 * it checked, and it checks each UNKNOWN payout at least hourly (the longest step of the check
 * back-off), so every window of this length holds a figure for every payout that stays UNKNOWN.
 */
export const OLDEST_UNKNOWN_WINDOW_MINUTES = 60;

/**
 * The window of the PayoutsAwaitingReview gauge: the first scheduled reconciler run of each window
 * of this many minutes counts the payouts in NEEDS_REVIEW (every run, when runs are further apart).
 * A count reads every shard of the by-state index, so counting on every one-minute run would add
 * those reads to every run for a figure nobody needs by the minute.
 */
export const REVIEW_GAUGE_EVERY_MINUTES = 5;

/** The period of the PayoutsAwaitingReview alarm and graph: each holds one count, at the schedule's cadence or the gauge's, whichever is slower. */
export function reviewGaugePeriodMinutes(reconcileEveryMinutes: number): number {
  return Math.max(REVIEW_GAUGE_EVERY_MINUTES, reconcileEveryMinutes);
}

export const METRICS_NAMESPACE = 'Payrelay';
export const METRICS_SERVICE = 'payrelay';
