'use strict';
/*
 * The X-Ray SDK's Lambda set-up as payrelay's Lambda build of the SDK (xray-sdk-for-lambda.cjs) runs
 * it: the package's `lib/env/aws_lambda.js` (aws-xray-sdk-core 3.12.0), step for step on the
 * package's own objects, less its one call into the HTTP middleware's sampler,
 * `mw_utils.disableCentralizedSampling()`.
 *
 * Why: requiring `aws_lambda.js` loads `middleware/mw_utils.js` and through it the whole centralized
 * sampling client (rule and target pollers, the sampling service connector, reservoirs, the local
 * sampler and its rules file), about 15 KiB that every traced cold start compiled and ran only to
 * switch that sampler to the local one. In Lambda nothing consults it: the facade segment takes its
 * sampling decision from the trace header Lambda sets, and the sampler serves only the web-framework
 * middleware, which the build leaves out.
 *
 * `facadeSegment` is the package's code as it stands in 3.12.0 but for how the facade object is made
 * (see there). test/infra/xray-sdk-for-lambda.test.ts
 * runs the package's set-up and this one in fresh processes and compares what each leaves behind
 * (the facade segment and its behaviour across invocations, the emitter and streaming settings), so
 * an upgrade of aws-xray-sdk-core that changes the set-up fails there.
 */
const contextUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/context_utils');
const LambdaUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/utils').LambdaUtils;
const Segment = require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment');
const SegmentEmitter = require('../../node_modules/aws-xray-sdk-core/dist/lib/segment_emitter');
const SegmentUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment_utils');
const logger = require('../../node_modules/aws-xray-sdk-core/dist/lib/logger');
const TraceID = require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/attributes/trace_id');

let xAmznTraceIdPrev = null;

/** The package's `init()`: the facade segment every invocation's subsegments hang under, entered for the whole process. */
function init() {
  contextUtils.enableManualMode = function () {
    logger.getLogger().warn('AWS Lambda does not support AWS X-Ray manual mode.');
  };
  SegmentEmitter.disableReusableSocket();
  SegmentUtils.setStreamingThreshold(0);
  const namespace = contextUtils.getNamespace();
  namespace.enter(namespace.createContext());
  contextUtils.setSegment(facadeSegment());
}

/**
 * The package's facade segment: it reads each invocation's trace header and refuses to be written to.
 *
 * The package makes it with `new Segment('facade')`, which gives it an identity at load: a new
 * random trace id and a random segment id (two crypto.randomBytes calls), a start time, and the
 * service and SDK data. None of it is ever read: every read of the facade goes through the SDK's
 * getSegment, which first runs `resolveLambdaTraceData` below, and that resets the trace id and the
 * id before it takes them from the invocation's trace header (or leaves them invalid without one);
 * the facade itself is never sent (its format, flush and close do nothing). So it is made here as a
 * Segment without that identity, the rest as the package has it; test/infra/xray-sdk-for-lambda.test.ts
 * compares its first invocation's subsegments with the package's.
 */
function facadeSegment() {
  const segment = Object.create(Segment.prototype);
  segment.name = 'facade';
  const whitelistFcn = ['addNewSubsegment', 'addSubsegment', 'removeSubsegment', 'toString', 'addSubsegmentWithoutSampling', 'addNewSubsegmentWithoutSampling'];
  const silentFcn = ['incrementCounter', 'decrementCounter', 'isClosed', 'close', 'format', 'flush'];
  const xAmznTraceId = process.env._X_AMZN_TRACE_ID;
  for (const key in segment) {
    if (typeof segment[key] === 'function' && whitelistFcn.indexOf(key) === -1) {
      if (silentFcn.indexOf(key) === -1) {
        segment[key] = function facade() {
          logger.getLogger().warn('Function "' + key + '" cannot be called on an AWS Lambda segment. Please use a subsegment to record data.');
        };
      } else {
        segment[key] = function facade() {};
      }
    }
  }
  segment.trace_id = TraceID.Invalid().toString();
  segment.isClosed = function () {
    return true;
  };
  segment.in_progress = false;
  segment.counter = 1;
  segment.notTraced = true;
  segment.facade = true;
  segment.reset = function reset() {
    this.trace_id = TraceID.Invalid().toString();
    this.id = '00000000';
    delete this.subsegments;
    this.notTraced = true;
  };
  segment.resolveLambdaTraceData = function resolveLambdaTraceData() {
    const invokeStore = globalThis.awslambda?.InvokeStore;
    const traceIdFromInvokeStore = invokeStore?.getXRayTraceId();
    const xAmznLambda = traceIdFromInvokeStore ?? process.env._X_AMZN_TRACE_ID;
    if (xAmznLambda) {
      // A new trace header resets the trace data, so nothing leaks from one invocation to the next.
      if (xAmznLambda != xAmznTraceIdPrev) {
        this.reset();
        if (LambdaUtils.populateTraceData(segment, xAmznLambda)) xAmznTraceIdPrev = xAmznLambda;
      }
    } else {
      this.reset();
      contextUtils.contextMissingStrategy.contextMissing(
        'Missing AWS Lambda trace data for X-Ray. Ensure Active Tracing is enabled and no subsegments are created outside the function handler.',
      );
    }
  };
  // Valid trace data at start-up (rare: this usually runs during the cold start, before any header).
  if (LambdaUtils.validTraceData(xAmznTraceId)) {
    if (LambdaUtils.populateTraceData(segment, xAmznTraceId)) xAmznTraceIdPrev = xAmznTraceId;
  }
  return segment;
}

module.exports = { init };
