/**
 * Metric names shared by the emitters (handlers, use cases) and the alarms and dashboard (infra).
 * All are emitted in the `Payrelay` namespace with the Powertools default dimension `service`.
 */
export const METRIC = {
  payoutSucceeded: 'PayoutSucceeded',
  payoutFailed: 'PayoutFailed',
  payoutRejected: 'PayoutRejected',
  payoutNeedsReview: 'PayoutNeedsReview',
  payoutReversed: 'PayoutReversed',
  payoutUnknownOutcome: 'PayoutUnknownOutcome',
  nameMismatch: 'NameMismatch',
  dlqSend: 'DlqSend',
  reconcileLagSeconds: 'ReconcileLagSeconds',
  oldestUnknownAgeSeconds: 'OldestUnknownAgeSeconds',
  webhookStored: 'WebhookStored',
  webhookDuplicate: 'WebhookDuplicate',
  webhookUnauthorized: 'WebhookUnauthorized',
  webhookUnrecognized: 'WebhookUnrecognized',
  kycDecisionChanged: 'KycDecisionChanged',
} as const;

export const METRICS_NAMESPACE = 'Payrelay';
export const METRICS_SERVICE = 'payrelay';
