import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from './logger';
import { metrics } from './metrics';
import { invocationTracing } from './tracer';

/**
 * The middy chain every non-HTTP handler runs in: the invocation traced (X-Ray, outermost, so the
 * other middlewares run inside its segment; the response is not copied into the trace), the Lambda
 * context on every log line, metrics flushed after each invocation. One place, so the handlers
 * cannot drift apart.
 */
export function lambdaChain<E, R>(handler: (event: E, context: Context) => Promise<R>) {
  return middy(handler)
    .use(invocationTracing())
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics));
}
