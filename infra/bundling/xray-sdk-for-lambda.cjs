'use strict';
/*
 * The X-Ray SDK (aws-xray-sdk-core) as payrelay's Lambda bundles carry it. PayrelayFunction's esbuild
 * alias puts this module where the Powertools tracer imports `aws-xray-sdk-core`, so a bundle holds
 * the parts a traced Lambda function uses (segments, the context, the AWS SDK v3 client patcher, the
 * Lambda facade set-up) and not the rest of the package's entry: the AWS SDK v2 patcher with semver,
 * the global HTTP and promise patchers, the EC2/ECS/Beanstalk plugins, the SQL and web-framework
 * middleware helpers with the centralized sampling client they use. That cut the traced cold start
 * by about a fifth of its gap to the DynamoDB-only floor (docs/performance.md, "Cold start").
 *
 * Every member it keeps is the package's own object (same files, one instance) but the AWS SDK v3
 * client patcher, which is the package's on a trimmed set of capture rules (xray-aws-sdk-v3-for-lambda.cjs),
 * and it sets the SDK up at load as the package's entry does (lib/aws-xray.js), the Lambda set-up through
 * xray-lambda-setup.cjs (the package's, less the sampling client). A member it leaves out throws a
 * clear error when called. test/infra/xray-sdk-for-lambda.test.ts holds it to the members the
 * installed Powertools tracer takes from the SDK; test/infra/synth.test.ts traces a deployed bundle.
 *
 * The SDK's context (which segment is current) runs on infra/bundling/cls-context-for-lambda.ts, the
 * same namespace API on Node's AsyncLocalStorage, in place of cls-hooked (a second alias).
 *
 * The paths are relative (esbuild's alias also rewrites `aws-xray-sdk-core/...` subpaths), so the
 * package must sit in the project's node_modules: the bundling fails loudly if it does not.
 */
const contextUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/context_utils');
const logging = require('../../node_modules/aws-xray-sdk-core/dist/lib/logger');
const segmentUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment_utils');
const capture = require('../../node_modules/aws-xray-sdk-core/dist/lib/capture');
const pkginfo = require('../../node_modules/aws-xray-sdk-core/package.json');

const TRACE_INSTEAD = 'trace AWS SDK v3 clients with captured() and provider calls with the Tracing port instead';
const RULES_INSTEAD =
  "the build carries the package's capture rules of the services payrelay calls (infra/bundling/xray-aws-whitelist-for-lambda.json): copy a new traced client's service there from the package's aws_whitelist.json";

/** A member of the full SDK that this build leaves out: calling it says so, and what to do instead, rather than failing obscurely. */
function leftOut(name, instead = TRACE_INSTEAD) {
  return function leftOutOfLambdaBuild() {
    throw new Error(`AWSXRay.${name} is left out of payrelay's Lambda build of the X-Ray SDK (infra/bundling/xray-sdk-for-lambda.cjs): ${instead}`);
  };
}

const AWSXRay = {
  setAWSWhitelist: leftOut('setAWSWhitelist', RULES_INSTEAD),
  appendAWSWhitelist: leftOut('appendAWSWhitelist', RULES_INSTEAD),
  setStreamingThreshold: segmentUtils.setStreamingThreshold,
  setLogger: logging.setLogger,
  getLogger: logging.getLogger,
  setDaemonAddress: require('../../node_modules/aws-xray-sdk-core/dist/lib/daemon_config').setDaemonAddress,
  captureFunc: capture.captureFunc,
  captureAsyncFunc: capture.captureAsyncFunc,
  captureCallbackFunc: capture.captureCallbackFunc,
  captureAWSv3Client: require('./xray-aws-sdk-v3-for-lambda.cjs').captureAWSClient,
  config: leftOut('config'),
  captureAWS: leftOut('captureAWS'),
  captureAWSClient: leftOut('captureAWSClient'),
  captureHTTPs: leftOut('captureHTTPs'),
  captureHTTPsGlobal: leftOut('captureHTTPsGlobal'),
  capturePromise: leftOut('capturePromise'),
  utils: require('../../node_modules/aws-xray-sdk-core/dist/lib/utils'),
  getNamespace: contextUtils.getNamespace,
  resolveSegment: contextUtils.resolveSegment,
  resolveManualSegmentParams: contextUtils.resolveManualSegmentParams,
  getSegment: contextUtils.getSegment,
  setSegment: contextUtils.setSegment,
  isAutomaticMode: contextUtils.isAutomaticMode,
  enableAutomaticMode: contextUtils.enableAutomaticMode,
  enableManualMode: contextUtils.enableManualMode,
  setContextMissingStrategy: contextUtils.setContextMissingStrategy,
  Segment: require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/segment'),
  Subsegment: require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/attributes/subsegment'),
  SegmentUtils: segmentUtils,
};

// The set-up the package's entry runs at load: the SDK and service data every segment carries, and
// in Lambda the facade segment the function's subsegments hang under (xray-lambda-setup.cjs: the
// package's Lambda set-up without the sampling client it loads for nothing).
segmentUtils.setSDKData({
  sdk: 'X-Ray for Node.js',
  sdk_version: pkginfo.version || 'unknown',
  package: pkginfo.name || 'unknown',
});
segmentUtils.setServiceData({
  runtime: process.release && process.release.name ? process.release.name : 'unknown',
  runtime_version: process.version,
  version: process.env.npm_package_version || 'unknown',
  name: process.env.npm_package_name || 'unknown',
});
if (process.env.LAMBDA_TASK_ROOT) require('./xray-lambda-setup.cjs').init();

module.exports = AWSXRay;
