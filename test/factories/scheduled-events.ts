import { randomUUID } from 'node:crypto';
import type { ScheduledEvent } from 'aws-lambda';

/** The EventBridge scheduled-rule event that triggers the reconciler. */
export function scheduledEvent(time: Date = new Date()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: time.toISOString(),
    region: 'eu-west-1',
    resources: ['arn:aws:events:eu-west-1:000000000000:rule/payrelay-test-reconcile'],
    detail: {},
  };
}
