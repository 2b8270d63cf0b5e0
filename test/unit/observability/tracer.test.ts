import { describe, expect, it } from 'vitest';
import { captured, invocationTracing, mayTrace, tracer } from '@shared/observability/tracer';

const LAMBDA = { AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x' };

describe('the tracer is loaded only where it can trace', () => {
  it('may trace inside Lambda unless POWERTOOLS_TRACE_ENABLED turns it off', () => {
    expect(mayTrace(LAMBDA)).toBe(true);
    expect(mayTrace({ ...LAMBDA, POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(true);
    expect(mayTrace({ ...LAMBDA, POWERTOOLS_TRACE_ENABLED: 'false' })).toBe(false);
    expect(mayTrace({ ...LAMBDA, POWERTOOLS_TRACE_ENABLED: ' FALSE ' })).toBe(false);
  });

  it('never traces outside Lambda, whatever POWERTOOLS_TRACE_ENABLED says', () => {
    expect(mayTrace({})).toBe(false);
    expect(mayTrace({ AWS_EXECUTION_ENV: '' })).toBe(false);
    expect(mayTrace({ POWERTOOLS_TRACE_ENABLED: 'true' })).toBe(false);
  });

  it('outside Lambda loads no tracer: clients stay as built and chains get no tracing middleware', () => {
    expect(process.env.AWS_EXECUTION_ENV).toBeUndefined();
    expect(tracer).toBeUndefined();
    const client = { send: () => undefined };
    expect(captured(client)).toBe(client);
    expect(invocationTracing()).toEqual([]);
  });
});
