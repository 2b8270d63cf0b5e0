import type { Tracing } from '@shared/ports/runtime';
import { tracer } from '@shared/observability/tracer';

/**
 * Tracing over the X-Ray tracer: each span is a subsegment of the invocation's handler segment, in the
 * `remote` namespace, with the error it ended on. When tracing is off (tests, local stack) it only
 * runs the call. The parent is never switched, so spans that run at once (a worker batch) stay apart.
 */
export const xrayTracing: Tracing = {
  async span(name, call) {
    const parent = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
    if (!parent) return call();
    const subsegment = parent.addNewSubsegment(name);
    subsegment.namespace = 'remote';
    try {
      return await call();
    } catch (error) {
      subsegment.addError(error as Error, true);
      throw error;
    } finally {
      subsegment.close();
    }
  },
};
