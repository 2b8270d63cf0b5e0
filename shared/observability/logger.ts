import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The one structured logger of runtime code. Correlation keys (payoutKey, withdrawalReference,
 * eventId, userReference) are appended per record with `logger.appendKeys` or per line.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'payrelay' });
