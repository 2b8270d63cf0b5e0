import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * The X-Ray tracer of runtime code. It traces only inside Lambda (the tracer turns itself off where
 * AWS_EXECUTION_ENV is unset: tests, the local stack, the CLI; POWERTOOLS_TRACE_ENABLED=false turns it
 * off in Lambda too). Outgoing HTTP is not patched globally: provider calls are spans named by their
 * operation (shared/adapters/tracing.ts), and the SDK clients are captured one by one.
 */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'payrelay', captureHTTPsRequests: false });
