import { Metrics } from '@aws-lambda-powertools/metrics';
import { logger } from './logger';
import { METRICS_NAMESPACE, METRICS_SERVICE } from './metric-names';

export { MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * The metrics utility's own messages go through the structured logger. Its warning that an
 * invocation published no metric is expected here (a refused webhook records none), so it is debug.
 */
const utilityLogger = {
  debug: (...content: unknown[]) => logger.debug(String(content[0]), { utility: 'metrics' }),
  info: (...content: unknown[]) => logger.info(String(content[0]), { utility: 'metrics' }),
  warn: (...content: unknown[]) => {
    const message = String(content[0]);
    if (message.startsWith('No application metrics to publish')) logger.debug(message, { utility: 'metrics' });
    else logger.warn(message, { utility: 'metrics' });
  },
  error: (...content: unknown[]) => logger.error(String(content[0]), { utility: 'metrics' }),
};

const stage = process.env.PAYRELAY_STAGE;

/**
 * EMF metrics under one namespace, so alarms and the dashboard find every payrelay figure. Deployed
 * functions add the stage as a dimension (PAYRELAY_STAGE), so two stages in one account and region
 * never set off each other's alarms.
 */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? METRICS_SERVICE,
  ...(stage ? { defaultDimensions: { stage } } : {}),
  logger: utilityLogger,
});
