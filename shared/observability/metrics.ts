import { Metrics } from '@aws-lambda-powertools/metrics';
import { METRICS_NAMESPACE, METRICS_SERVICE } from './metric-names';

export { MetricUnit } from '@aws-lambda-powertools/metrics';

/** EMF metrics under one namespace, so alarms and the dashboard find every payrelay figure. */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? METRICS_SERVICE,
});
