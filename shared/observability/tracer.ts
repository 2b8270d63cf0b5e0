import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';

/**
 * Whether this process may trace: the Powertools tracer traces only inside Lambda (AWS_EXECUTION_ENV
 * set) and never with POWERTOOLS_TRACE_ENABLED=false. Where it cannot trace (tests, the local
 * stack, the CLI, a stage deployed with tracing off) the tracer and the X-Ray SDK under it are
 * never loaded, which spares that process the largest single cost of its cold start.
 */
export function mayTrace(env: NodeJS.ProcessEnv = process.env): boolean {
  return (env.AWS_EXECUTION_ENV ?? '') !== '' && (env.POWERTOOLS_TRACE_ENABLED ?? '').trim().toLowerCase() !== 'false';
}

/**
 * The X-Ray tracer of runtime code, loaded at module load when the process may trace (see
 * `mayTrace`; the tracer then applies the rest of its own rule, e.g. off under the SAM CLI), and
 * `undefined` otherwise. Outgoing HTTP is not patched globally: provider calls are spans named by
 * their operation (shared/adapters/tracing.ts), and the SDK clients are captured one by one.
 */
export const tracer: Tracer | undefined = mayTrace()
  ? new (await import('@aws-lambda-powertools/tracer')).Tracer({
      serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'payrelay',
      captureHTTPsRequests: false,
    })
  : undefined;

/** An SDK client whose calls become subsegments when tracing is on; the client itself otherwise. */
export function captured<C>(client: C): C {
  return tracer ? tracer.captureAWSv3Client(client) : client;
}

/**
 * The middy middleware that traces an invocation (a segment per handler call; the answer is not
 * copied into the trace), as a list `use()` takes: empty when tracing is off. Outermost in every
 * chain, so the other middlewares run inside its segment.
 */
export function invocationTracing(): MiddlewareObj[] {
  return tracer ? [captureLambdaHandler(tracer, { captureResponse: false })] : [];
}
