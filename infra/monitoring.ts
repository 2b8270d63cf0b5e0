import { ArnFormat, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRIC, METRICS_NAMESPACE, METRICS_SERVICE } from '@shared/observability/metric-names';
import type { PayrelayConfig } from './config';
import { OUTPUT } from './outputs';
import type { PayrelayFunctions } from './payrelay-function';

export interface PayrelayMonitoringProps {
  readonly config: PayrelayConfig;
  readonly functions: PayrelayFunctions;
  readonly api: HttpApi;
  readonly payoutsQueue: IQueue;
  readonly payoutsDlq: IQueue;
}

const FIVE_MINUTES = Duration.minutes(5);

/** A payrelay metric emitted by one stage's handlers (Powertools EMF, dimensions service and stage). */
export function payrelayMetric(stage: string, name: string, statistic: 'Sum' | 'Maximum', period: Duration = FIVE_MINUTES): Metric {
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
 * every alarm notifies an SNS topic (encrypted with a key CloudWatch may use) subscribed by that address.
 */
export class PayrelayMonitoring extends Construct {
  readonly alarms: Alarm[] = [];
  readonly topic?: Topic;
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: PayrelayMonitoringProps) {
    super(scope, id);
    const { config, functions, api, payoutsQueue, payoutsDlq } = props;
    const prefix = `payrelay-${config.stage}`;
    const metric = (name: string, statistic: 'Sum' | 'Maximum') => payrelayMetric(config.stage, name, statistic);

    if (config.alarms.email) {
      // The AWS-managed SNS key does not let CloudWatch publish; a customer key with a grant does.
      const key = new Key(this, 'AlarmTopicKey', { enableKeyRotation: true, description: `${prefix} alarm topic encryption` });
      // CloudWatch may use the key only on behalf of this stage's alarms (aws:SourceArn), in this
      // account: no other alarm, and no other account's CloudWatch, can publish through it.
      const stack = Stack.of(this);
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'AllowThisStageAlarmsToPublish',
          principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: {
            ArnLike: {
              'aws:SourceArn': stack.formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: `${prefix}-*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
            },
            StringEquals: { 'aws:SourceAccount': stack.account },
          },
        }),
      );
      this.topic = new Topic(this, 'AlarmTopic', { topicName: `${prefix}-alarms`, masterKey: key, enforceSSL: true });
      this.topic.addSubscription(new EmailSubscription(config.alarms.email));
      new CfnOutput(Stack.of(this), OUTPUT.alarmTopicArn, { value: this.topic.topicArn, description: 'SNS topic every alarm notifies' });
    }

    const alarm = (alarmId: string, metric: IMetric, threshold: number, description: string) => {
      const created = new Alarm(this, alarmId, {
        alarmName: `${prefix}-${alarmId}`,
        alarmDescription: `${description} See docs/alarms.md#${alarmId.toLowerCase()}.`,
        metric,
        threshold,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        // No data means nothing happened: no payouts, no callbacks, no errors.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      if (this.topic) {
        created.addAlarmAction(new SnsAction(this.topic));
        created.addOkAction(new SnsAction(this.topic));
      }
      this.alarms.push(created);
      return created;
    };

    alarm(
      'DlqNotEmpty',
      payoutsDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      0,
      'A payout request is in the dead-letter queue: it was never processed.',
    );
    alarm('PayoutNeedsReview', metric(METRIC.payoutNeedsReview, 'Sum'), 0, 'A payout was handed to a person (NEEDS_REVIEW).');
    alarm(
      'UnknownPayoutTooOld',
      metric(METRIC.oldestUnknownAgeSeconds, 'Maximum'),
      config.alarms.unknownAgeMinutes * 60,
      `A payout has been UNKNOWN for more than ${config.alarms.unknownAgeMinutes} minutes.`,
    );
    alarm(
      'WebhookUnauthorizedSpike',
      metric(METRIC.webhookUnauthorized, 'Sum'),
      config.alarms.webhookUnauthorizedPer5Minutes,
      `More than ${config.alarms.webhookUnauthorizedPer5Minutes} callbacks were refused as unauthorised (401) within 5 minutes.`,
    );
    alarm(
      'Api5xx',
      api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      config.alarms.api5xxPer5Minutes,
      'The callback API answered 5xx: a provider callback may not have been stored.',
    );
    for (const [functionId, fn] of Object.entries(functions)) {
      const alarmId = `${functionId.replace(/(^|-)([a-z])/g, (_m, _d, c: string) => c.toUpperCase())}Errors`;
      alarm(alarmId, fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }), 0, `The ${functionId} function failed (uncaught error or time-out).`);
    }

    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: `${prefix}-flow`, defaultInterval: Duration.hours(6) });
    const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
      new GraphWidget({ title, left, right, width: 12, height: 6 });
    const sums = (...names: string[]) => names.map((n) => metric(n, 'Sum'));
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
        sums(METRIC.payoutSucceeded, METRIC.payoutFailed, METRIC.payoutRejected, METRIC.payoutUnknownOutcome, METRIC.payoutNeedsReview),
        sums(METRIC.nameMismatch, METRIC.dlqSend),
      ),
    );
    this.dashboard.addWidgets(
      graph('Reconciliation', [metric(METRIC.oldestUnknownAgeSeconds, 'Maximum'), metric(METRIC.reconcileLagSeconds, 'Maximum')]),
      graph(
        'Webhooks',
        sums(METRIC.webhookStored, METRIC.webhookDuplicate, METRIC.webhookUnauthorized, METRIC.webhookUnrecognized, METRIC.kycDecisionChanged),
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
