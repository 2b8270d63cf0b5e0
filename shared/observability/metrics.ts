import { Metrics } from '@aws-lambda-powertools/metrics';

export { MetricUnit } from '@aws-lambda-powertools/metrics';

/** EMF metrics under one namespace, so alarms and the dashboard find every payrelay figure. */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Payrelay',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'payrelay',
});
