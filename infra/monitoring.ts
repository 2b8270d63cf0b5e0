import { ArnFormat, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  SingleValueWidget,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE, OLDEST_UNKNOWN_WINDOW_MINUTES, reviewGaugePeriodMinutes } from '@shared/observability/metric-names';
import type { PayrelayConfig } from './config';
import { OUTPUT } from './outputs';
import type { PayrelayFunctions } from './payrelay-function';

export interface PayrelayMonitoringProps {
  readonly config: PayrelayConfig;
  readonly functions: PayrelayFunctions;
  readonly api: HttpApi;
  readonly payoutsQueue: IQueue;
  readonly payoutsDlq: IQueue;
  /** The payout checks' dead-letter queue. */
  readonly checksDlq: IQueue;
  readonly callbackApplyFailures: IQueue;
}

const FIVE_MINUTES = Duration.minutes(5);

/** One alarm: above `threshold` (or below it, `below`) for `periods` periods, one by default. */
interface AlarmSpec {
  readonly metric: IMetric;
  readonly threshold: number;
  readonly description: string;
  /** Fire when the metric is below the threshold instead of above. */
  readonly below?: boolean;
  /** Consecutive breaching periods before it fires (default 1). */
  readonly periods?: number;
  /** Count a period without data as breaching (a heartbeat); otherwise silence is quiet. */
  readonly missingBreaches?: boolean;
  /**
   * A gauge published only now and then (a condition, not events), or a figure that exists only where
   * a reconciler run finished: a period without data keeps the alarm where it is, since silence says
   * nothing about the condition and must not send its OK.
   */
  readonly missingHolds?: boolean;
  /** The section of docs/alarms.md, when it is not the alarm id. */
  readonly docsAnchor?: string;
  /**
   * It counts events that do not undo themselves (a payout handed to review, a changed KYC answer):
   * the alarm returns to OK five minutes later on its own while the matter still waits for a person,
   * so it sends no OK notification, which would read as "settled".
   */
  readonly perEvent?: boolean;
}

/** A payrelay metric emitted by one stage's handlers (Powertools EMF, dimensions service and stage). */
export function payrelayMetric(stage: string, name: string, statistic: 'Sum' | 'Maximum' | 'SampleCount', period: Duration = FIVE_MINUTES): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: name,
    dimensionsMap: { service: METRICS_SERVICE, stage },
    statistic,
    period,
  });
}

/**
 * The alarms of docs/alarms.md and a dashboard of the payout and webhook flow. With `alarms.email`
 * every alarm notifies an SNS topic (encrypted with a key CloudWatch may use) subscribed by that
 * address; with `alarms.topicArn` it notifies that existing topic (both may be given).
 */
export class PayrelayMonitoring extends Construct {
  readonly alarms: Alarm[] = [];
  /** Where every alarm sends its notifications: the e-mail topic and/or an existing topic. */
  readonly topics: readonly ITopic[];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: PayrelayMonitoringProps) {
    super(scope, id);
    const { config, functions, api, payoutsQueue, payoutsDlq, checksDlq, callbackApplyFailures } = props;
    const prefix = `payrelay-${config.stage}`;
    const metric = (name: string, statistic: 'Sum' | 'Maximum') => payrelayMetric(config.stage, name, statistic);

    const destinations: ITopic[] = [];
    if (config.alarms.email) {
      // The AWS-managed SNS key does not let CloudWatch publish; a customer key with a grant does.
      const key = new Key(this, 'AlarmTopicKey', { enableKeyRotation: true, description: `${prefix} alarm topic encryption` });
      // CloudWatch may use the key, and publish to the topic, only on behalf of this stage's alarms
      // (aws:SourceArn: every alarm below is named `${prefix}-<id>`), in this account: no other
      // alarm, and no other account's CloudWatch, can publish through them.
      const stack = Stack.of(this);
      const thisStageAlarms = {
        ArnLike: {
          'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: `${prefix}-*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
        },
        StringEquals: { 'aws:SourceAccount': stack.account },
      };
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'AllowThisStageAlarmsToPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: thisStageAlarms,
        }),
      );
      const topic = new Topic(this, 'AlarmTopic', { topicName: `${prefix}-alarms`, masterKey: key, enforceSSL: true });
      // enforceSSL gives the topic a policy of its own (a Deny of publishes without TLS), which
      // replaces SNS's default policy: without this Allow, CloudWatch could not publish and no alarm
      // would ever be delivered.
      topic.addToResourcePolicy(
        new PolicyStatement({
          sid: 'AllowThisStageAlarmsToPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['sns:Publish'],
          resources: [topic.topicArn],
          conditions: thisStageAlarms,
        }),
      );
      topic.addSubscription(new EmailSubscription(config.alarms.email));
      destinations.push(topic);
    }
    if (config.alarms.topicArn) destinations.push(Topic.fromTopicArn(this, 'ExistingAlarmTopic', config.alarms.topicArn));
    this.topics = destinations;
    if (destinations.length > 0) {
      new CfnOutput(Stack.of(this), OUTPUT.alarmTopicArn, {
        value: destinations.map((topic) => topic.topicArn).join(','),
        description: 'SNS topic(s) every alarm notifies',
      });
    }

    const alarm = (alarmId: string, spec: AlarmSpec) => {
      const created = new Alarm(this, alarmId, {
        alarmName: `${prefix}-${alarmId}`,
        alarmDescription: `${spec.description} See docs/alarms.md#${spec.docsAnchor ?? alarmId.toLowerCase()}.`,
        metric: spec.metric,
        threshold: spec.threshold,
        comparisonOperator: spec.below ? ComparisonOperator.LESS_THAN_THRESHOLD : ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: spec.periods ?? 1,
        datapointsToAlarm: spec.periods ?? 1,
        // No data means nothing happened (no payouts, no callbacks, no errors), except for a heartbeat,
        // and for a gauge or a figure of the runs, where it means only that no figure came.
        treatMissingData: spec.missingBreaches ? TreatMissingData.BREACHING : spec.missingHolds ? TreatMissingData.IGNORE : TreatMissingData.NOT_BREACHING,
      });
      for (const topic of destinations) {
        created.addAlarmAction(new SnsAction(topic));
        if (!spec.perEvent) created.addOkAction(new SnsAction(topic));
      }
      this.alarms.push(created);
      return created;
    };

    alarm('DlqNotEmpty', {
      metric: payoutsDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      description: 'A payout request is in the dead-letter queue: it was never processed.',
    });
    alarm('PayoutsQueueStale', {
      metric: payoutsQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: config.alarms.queueAgeMinutes * 60,
      description: `A payout request has waited on the payouts queue for more than ${config.alarms.queueAgeMinutes} minutes.`,
    });
    alarm('WorkerBatchFailed', {
      metric: metric(METRIC.workerBatchFailed, 'Sum'),
      threshold: 0,
      description: 'Every payout request of a worker batch failed: the queue is making no progress.',
    });
    alarm('ReconcilerHeartbeat', {
      metric: payrelayMetric(config.stage, METRIC.reconcileRunCompleted, 'Sum', Duration.minutes(config.reconcileEveryMinutes)),
      threshold: 1,
      below: true,
      periods: 3,
      missingBreaches: true,
      description: `No reconciler run finished in 3 intervals (${3 * config.reconcileEveryMinutes} minutes): open payouts are not being checked.`,
    });
    alarm('PayoutNeedsReview', {
      perEvent: true,
      metric: metric(METRIC.payoutNeedsReview, 'Sum'),
      threshold: 0,
      description: 'A payout was handed to a person (NEEDS_REVIEW). Fires once per hand-over and sends no OK: the payout waits until someone resolves it (payrelay payouts list --state NEEDS_REVIEW).',
    });
    // The standing figure beside PayoutNeedsReview's hand-overs. One count falls in each period; a
    // period without one (a run that failed its count, a dropped tick) keeps the state: "missing"
    // would turn it to INSUFFICIENT_DATA and back, re-sending the alarm, and "notBreaching" would
    // send the OK while payouts still wait. A reconciler that stopped is ReconcilerHeartbeat's alarm.
    const reviewGaugeMinutes = reviewGaugePeriodMinutes(config.reconcileEveryMinutes);
    const awaitingReview = payrelayMetric(config.stage, METRIC.payoutsAwaitingReview, 'Maximum', Duration.minutes(reviewGaugeMinutes));
    alarm('PayoutsAwaitingReview', {
      metric: awaitingReview,
      threshold: 0,
      missingHolds: true,
      description: `At least one payout waits for a person (NEEDS_REVIEW), as the reconciler counts them every ${reviewGaugeMinutes} minutes. Sends OK once none waits any more (payrelay payouts list --state NEEDS_REVIEW).`,
    });
    // Because PayoutsAwaitingReview holds its state without a count, a count that keeps failing while
    // the runs go on (throttling on the by-state index) would leave it stuck, in OK too, where new
    // reviews never page through it; the runs still finish, so ReconcilerHeartbeat stays quiet. This
    // alarm watches the figure itself, not one failure path: in each period in which a run finished,
    // did a count arrive? A count-failure metric would see only the failures the count's own catch
    // sees; this also sees a counting run that crashed or timed out while later runs of the window
    // finished, no run ever chosen to count (a RECONCILE_EVERY_MINUTES that does not match the
    // schedule), a flush that dropped the figure, a renamed metric or dimension.
    // IF(runs, counted, 0) is 0 where runs finished and no count arrived, the count where one did, and
    // no data where no run finished (CloudWatch's documented IF(TS, TS, scalar)): that last case holds
    // the state, since a reconciler that is not running is ReconcilerHeartbeat's alarm, and it keeps a
    // brand-new stage quiet. Plain "SampleCount < 1, missing data breaching" would fire at the first
    // evaluation after the deploy: with no data at all in the evaluation range, CloudWatch fills it all
    // as breaching, however many periods it spans. Here the only period with runs but no count on a
    // new stage is its first, partial window (runs of 1 to 4 minutes apart whose first run is not a
    // window's first), and 3 periods are needed. Range: 3 periods of at most 360 minutes (the longest
    // reconcileEveryMinutes) is 18 hours, within CloudWatch's one day for a period under an hour and
    // seven days for a longer one.
    alarm('PayoutsAwaitingReviewNotCounted', {
      metric: new MathExpression({
        expression: 'IF(runs, counted, 0)',
        usingMetrics: {
          runs: payrelayMetric(config.stage, METRIC.reconcileRunCompleted, 'Sum', Duration.minutes(reviewGaugeMinutes)),
          counted: payrelayMetric(config.stage, METRIC.payoutsAwaitingReview, 'SampleCount', Duration.minutes(reviewGaugeMinutes)),
        },
        period: Duration.minutes(reviewGaugeMinutes),
        label: 'review counts published in periods with a finished reconciler run',
      }),
      threshold: 1,
      below: true,
      periods: 3,
      missingHolds: true,
      description: `Reconciler runs finished in 3 periods of ${reviewGaugeMinutes} minutes without publishing a PayoutsAwaitingReview count (${3 * reviewGaugeMinutes} minutes): that alarm and PayoutAwaitingReviewTooLong hold their last state and will not page for new or overdue reviews until counts come back. Read the reconciler's "counting the payouts awaiting review failed" and "reading the oldest payout awaiting review failed" warnings.`,
    });
    // The review SLA: the age of the oldest payout awaiting review, published by the counting run
    // beside its count and only with it, 0 when none waits. Like the count, a period without a figure
    // keeps the state (a failed read publishes nothing rather than a 0 that would send the OK).
    const oldestAwaitingReview = payrelayMetric(config.stage, METRIC.oldestPayoutAwaitingReviewSeconds, 'Maximum', Duration.minutes(reviewGaugeMinutes));
    alarm('PayoutAwaitingReviewTooLong', {
      metric: oldestAwaitingReview,
      threshold: config.alarms.reviewWaitHours * 3600,
      missingHolds: true,
      description: `A payout has waited for a person (NEEDS_REVIEW) for more than ${config.alarms.reviewWaitHours} hours, as the reconciler reads the oldest every ${reviewGaugeMinutes} minutes. Sends OK once no payout has waited that long (payrelay payouts list --state NEEDS_REVIEW).`,
    });
    alarm('PayoutReversed', {
      perEvent: true,
      metric: metric(METRIC.payoutReversed, 'Sum'),
      threshold: 0,
      description: 'The money of a SUCCEEDED payout came back (REVERSED).',
    });
    alarm('UnknownPayoutTooOld', {
      metric: payrelayMetric(config.stage, METRIC.oldestUnknownAgeSeconds, 'Maximum', Duration.minutes(OLDEST_UNKNOWN_WINDOW_MINUTES)),
      threshold: config.alarms.unknownAgeMinutes * 60,
      description: `A payout has been UNKNOWN for more than ${config.alarms.unknownAgeMinutes} minutes.`,
    });
    alarm('WebhookUnauthorizedSpike', {
      metric: metric(METRIC.webhookUnauthorized, 'Sum'),
      threshold: config.alarms.webhookUnauthorizedPer5Minutes,
      description: `More than ${config.alarms.webhookUnauthorizedPer5Minutes} callbacks were refused as unauthorised (401) within 5 minutes.`,
    });
    alarm('Api5xx', {
      metric: api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: config.alarms.api5xxPer5Minutes,
      description: 'The callback API answered 5xx: a provider callback may not have been stored.',
    });
    alarm('WebhookUnrecognized', {
      perEvent: true,
      metric: metric(METRIC.webhookUnrecognized, 'Sum'),
      threshold: 0,
      description: `An authentic callback payrelay does not recognize (an unknown status word, a new shape) was stored and not applied: ${config.kyc.enabled ? 'a KYC rejection or a payout status' : 'a payout status'} may be in it.`,
    });
    // A stage without KYC (kyc.enabled: false) receives no KYC callback, so no KYC answer can change.
    if (config.kyc.enabled) {
      alarm('KycDecisionChanged', {
        perEvent: true,
        metric: metric(METRIC.kycDecisionChanged, 'Sum'),
        threshold: 0,
        description: "A KYC subject's final answer changed (for example approved, then rejected): payouts may already have been paid on the earlier answer.",
      });
    }
    alarm('CollectionStatusContradicted', {
      perEvent: true,
      metric: metric(METRIC.collectionStatusContradicted, 'Sum'),
      threshold: 0,
      description: "A collection's final order status was contradicted by a later order notification (for example EXPIRED, then COMPLETED): the first stays; settle with the provider which is true.",
    });
    alarm('CallbackApplyFailed', {
      metric: callbackApplyFailures.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      description: 'A stored callback failed every stream retry of the callback applier; the sweep keeps retrying it.',
    });
    alarm('PayoutChecksDlqNotEmpty', {
      metric: checksDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      description: "A delayed payout check failed every receive and is in the checks' dead-letter queue: the payout checker is failing (the reconciler's sweep still checks every open payout).",
    });
    alarm('CallbacksAppliedLate', {
      metric: metric(METRIC.callbacksAppliedLate, 'Sum'),
      threshold: 0,
      description: 'The sweep found stored callbacks that had waited longer than APPLY_LATE_AFTER_MINUTES to be applied.',
    });
    if (functions['kyc-catch-up']) {
      alarm('KycCallbacksRecovered', {
        perEvent: true,
        metric: metric(METRIC.kycCallbacksRecovered, 'Sum'),
        threshold: 0,
        description: 'The scheduled KYC catch-up recovered callbacks the KYC service had sent but payrelay never received: deliveries are being missed.',
      });
    }
    for (const [functionId, fn] of Object.entries(functions)) {
      const name = functionId.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase());
      alarm(`${name}Errors`, {
        metric: fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: 0,
        description: `The ${functionId} function failed (uncaught error or time-out).`,
      });
      alarm(`${name}Throttles`, {
        metric: fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        threshold: 0,
        description: `Lambda refused to run the ${functionId} function (throttled): the account or function concurrency limit was reached.`,
        docsAnchor: 'function-throttles',
      });
    }

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `${prefix}-flow`, defaultInterval: Duration.hours(6) });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 12, height: 6 });
    const sums = (...names: string[]) => names.map((n) => metric(n, 'Sum'));
    const kycSums = config.kyc.enabled ? [METRIC.kycDecisionChanged] : [];
    const kycRecoveredSums = config.kyc.enabled ? [METRIC.kycCallbacksRecovered] : [];
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `# payrelay ${config.stage}\nPayout flow: queue → worker → provider → reconciler. Webhook flow: API → receivers → events table. Alarms: docs/alarms.md.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph(
        'Payout requests: queue and DLQ',
        [
          payoutsQueue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
          payoutsQueue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' }),
        ],
        [payoutsDlq.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', label: 'DLQ visible' })],
      ),
      graph(
        'Payout outcomes',
        sums(METRIC.payoutSucceeded, METRIC.payoutFailed, METRIC.payoutRejected, METRIC.payoutUnknownOutcome, METRIC.payoutNeedsReview, METRIC.payoutReversed),
        sums(METRIC.nameMismatch, METRIC.dlqSend),
      ),
    );
    // In hours, as the SLA and its setting are written; the line is the alarm's threshold.
    const oldestWaitHours = new MathExpression({
      expression: 'wait / 3600',
      usingMetrics: { wait: oldestAwaitingReview },
      period: Duration.minutes(reviewGaugeMinutes),
      label: 'longest wait (hours)',
    });
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Payouts awaiting a person (NEEDS_REVIEW)',
        left: [awaitingReview.with({ label: 'waiting now' })],
        right: [metric(METRIC.payoutNeedsReview, 'Sum').with({ label: 'handed to review' })],
        width: 8,
        height: 6,
      }),
      new SingleValueWidget({ title: 'Payouts awaiting review, latest count', metrics: [awaitingReview], sparkline: true, width: 8, height: 6 }),
      new GraphWidget({
        title: 'Longest wait for a person (hours)',
        left: [oldestWaitHours],
        leftAnnotations: [{ value: config.alarms.reviewWaitHours, label: `PayoutAwaitingReviewTooLong (${config.alarms.reviewWaitHours} h)` }],
        leftYAxis: { min: 0 },
        width: 8,
        height: 6,
      }),
    );
    this.dashboard.addWidgets(
      graph(
        'Reconciliation',
        [metric(METRIC.oldestUnknownAgeSeconds, 'Maximum'), metric(METRIC.reconcileLagSeconds, 'Maximum')],
        sums(METRIC.reconcileRunCompleted, METRIC.workerBatchFailed),
      ),
      graph(
        'Webhooks',
        // The KYC lines only where KYC is deployed (kyc.enabled), in their places of the graph.
        sums(METRIC.webhookStored, METRIC.webhookDuplicate, METRIC.webhookUnauthorized, METRIC.webhookUnrecognized, METRIC.callbackApplied, METRIC.callbacksAppliedLate, ...kycSums, METRIC.collectionStatusContradicted, ...kycRecoveredSums),
        [api.metricClientError({ statistic: 'Sum' }), api.metricServerError({ statistic: 'Sum' })],
      ),
    );
    const fns = Object.entries(functions);
    this.dashboard.addWidgets(
      graph(
        'Function errors and throttles',
        fns.map(([label, fn]) => fn.metricErrors({ statistic: 'Sum', label: `${label} errors` })),
        fns.map(([label, fn]) => fn.metricThrottles({ statistic: 'Sum', label: `${label} throttles` })),
      ),
      graph(
        'Function duration (p99) and API latency (p99)',
        fns.map(([label, fn]) => fn.metricDuration({ statistic: 'p99', label })),
        [api.metricLatency({ statistic: 'p99' })],
      ),
    );
    new CfnOutput(Stack.of(this), OUTPUT.dashboardName, { value: `${prefix}-flow`, description: 'CloudWatch dashboard of the payout and webhook flow' });
  }
}
