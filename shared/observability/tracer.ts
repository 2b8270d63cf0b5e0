import { Tracer } from '@aws-lambda-powertools/tracer';

/** X-Ray tracer; disabled outside Lambda by POWERTOOLS_TRACE_ENABLED=false. */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'payrelay' });
