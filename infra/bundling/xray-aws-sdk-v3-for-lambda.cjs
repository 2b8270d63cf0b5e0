'use strict';
/*
 * The X-Ray SDK's AWS SDK v3 client patcher as payrelay's Lambda build of the SDK
 * (xray-sdk-for-lambda.cjs) carries it: the package's `lib/patchers/aws3_p.js` (aws-xray-sdk-core
 * 3.12.0) with the `Aws` attributes of `lib/segments/attributes/aws.js` and the parameter capture of
 * `lib/patchers/call_capturer.js`, step for step on the package's own segments, context, logger and
 * utils, with one difference: the capture rules are those of the services payrelay's traced clients
 * call that the package has rules for (DynamoDB and SQS, in xray-aws-whitelist-for-lambda.json, the
 * package's entries as they are; Secrets Manager has none), not the package's whole
 * `resources/aws_whitelist.json`.
 *
 * Why: the package's patcher requires `call_capturer.js`, which requires that whole file (rules for
 * SNS, Lambda, S3 and SageMaker too, about 10 KiB), and the bundling cannot trim a file a package
 * requires by a relative path. Every traced cold start parsed and built it, and no payrelay client
 * ever looks it up. The subsegments are the same: test/infra/xray-sdk-for-lambda.test.ts runs each
 * payrelay SDK call through the package's patcher and this one and compares what they record, and
 * holds the rules to the package's entries, so an upgrade that changes either fails there.
 *
 * Custom rules (`setAWSWhitelist`, `appendAWSWhitelist`) are left out of the build: nothing in
 * payrelay sets any.
 */
const { isThrottlingError } = require('../../node_modules/@smithy/service-error-classification');
const { stringify } = require('node:querystring');
const Subsegment = require('../../node_modules/aws-xray-sdk-core/dist/lib/segments/attributes/subsegment');
const contextUtils = require('../../node_modules/aws-xray-sdk-core/dist/lib/context_utils');
const logger = require('../../node_modules/aws-xray-sdk-core/dist/lib/logger');
const { safeParseInt, getCauseTypeFromHttpStatus } = require('../../node_modules/aws-xray-sdk-core/dist/lib/utils');
const { services } = require('./xray-aws-whitelist-for-lambda.json');

const XRAY_PLUGIN_NAME = 'XRaySDKInstrumentation';

/** `call_capturer.js`'s `toSnakeCase`. */
function toSnakeCase(param) {
  return param === 'IPAddress' ? 'ip_address' : param.split(/(?=[A-Z])/).join('_').toLowerCase();
}

/** `call_capturer.js`'s `captureCallParams`. */
function captureCallParams(params, call, data) {
  for (const param of params) {
    if (typeof call[param] !== 'undefined') data[toSnakeCase(param)] = call[param];
  }
}

/** `call_capturer.js`'s `captureDescriptors`. */
function captureDescriptors(descriptors, params, data) {
  for (const paramName in descriptors) {
    const attributes = descriptors[paramName];
    if (typeof params[paramName] === 'undefined') continue;
    let paramData;
    if (attributes.list && attributes.get_count) paramData = params[paramName] ? params[paramName].length : 0;
    else paramData = attributes.get_keys === true ? Object.keys(params[paramName]) : params[paramName];
    if (typeof attributes.rename_to === 'string') data[attributes.rename_to] = paramData;
    else data[toSnakeCase(paramName)] = paramData;
  }
}

/** `CallCapturer.prototype.capture`: the request and response data the rules name, for one call. */
function capture(serviceName, response) {
  const operation = response.request.operation;
  const call = services[serviceName] !== undefined ? services[serviceName].operations[operation] : null;
  if (call === null) {
    logger.getLogger().debug('Call "' + serviceName + '.' + operation + '" is not whitelisted for additional data capturing. Ignoring.');
    return;
  }
  const dataCaptured = {};
  for (const paramType in call) {
    const params = call[paramType];
    if (paramType === 'request_parameters') captureCallParams(params, response.request.params, dataCaptured);
    else if (paramType === 'request_descriptors') captureDescriptors(params, response.request.params, dataCaptured);
    else if (paramType === 'response_parameters') {
      if (response.data) captureCallParams(params, response.data, dataCaptured);
    } else if (paramType === 'response_descriptors') {
      if (response.data) captureDescriptors(params, response.data, dataCaptured);
    } else {
      logger.getLogger().error('Unknown parameter type "' + paramType + '". Must be "request_descriptors", "response_descriptors", ' + '"request_parameters" or "response_parameters".');
    }
  }
  return dataCaptured;
}

/** `aws.js`'s `Aws`: the `aws` attribute of a call's subsegment. */
function Aws(res, serviceName) {
  const operation = res.request.operation;
  this.operation = (operation ? operation.charAt(0).toUpperCase() + operation.slice(1) : undefined) || '';
  if (res && res.request && res.request.httpRequest && res.request.httpRequest.region) this.region = res.request.httpRequest.region;
  if (res && res.requestId) this.request_id = res.requestId;
  this.retries = res.retryCount || 0;
  if (res.extendedRequestId && serviceName && serviceName.toLowerCase() === 's3') this.id_2 = res.extendedRequestId;
  if (serviceName) {
    const data = capture(serviceName.toLowerCase(), res);
    for (const attribute in data) this[attribute] = data[attribute];
  }
}

/** `aws3_p.js`'s `buildAttributesFromMetadata`. */
function buildAttributesFromMetadata(service, operation, region, commandInput, res, error) {
  const metadata = res?.output?.$metadata || error?.$metadata;
  const { extendedRequestId, requestId, httpStatusCode: statusCode, attempts } = metadata;
  const aws = new Aws(
    {
      extendedRequestId,
      requestId,
      retryCount: attempts,
      data: res?.output,
      request: { operation, params: commandInput, httpRequest: { region, statusCode } },
    },
    service,
  );
  const http = {};
  if (statusCode) http.response = { status: statusCode };
  if (res?.response?.headers && res.response.headers['content-length'] !== undefined) {
    if (!http.response) http.response = {};
    http.response.content_length = safeParseInt(res.response.headers['content-length']);
  }
  return [aws, http];
}

/** `aws3_p.js`'s `addFlags`. */
function addFlags(http, subsegment, err) {
  if (err && isThrottlingError(err)) subsegment.addThrottleFlag();
  else if (safeParseInt(http.response?.status) === 429 || safeParseInt(err?.$metadata?.httpStatusCode) === 429) subsegment.addThrottleFlag();
  const cause = getCauseTypeFromHttpStatus(safeParseInt(http.response?.status));
  if (cause === 'fault') subsegment.addFaultFlag();
  else if (cause === 'error') subsegment.addErrorFlag();
}

/** `aws3_p.js`'s middleware: a subsegment per call, the trace header on the request. */
const getXRayMiddleware = (config, manualSegment) => (next, context) => async (args) => {
  const segment = contextUtils.isAutomaticMode() ? contextUtils.resolveSegment() : manualSegment;
  const { clientName, commandName } = context;
  const commandInput = args?.input ?? {};
  const commandOperation = commandName.slice(0, -7); // Strip trailing "Command" string
  const operation = commandOperation.charAt(0).toLowerCase() + commandOperation.slice(1);
  const service = clientName.slice(0, -6); // Strip trailing "Client" string
  if (!segment) {
    const output = service + '.' + operation;
    if (!contextUtils.isAutomaticMode()) {
      logger.getLogger().info('Call ' + output + ' requires a segment object' + ' passed to captureAWSv3Client for tracing in manual mode. Ignoring.');
    } else {
      logger.getLogger().info('Call ' + output + ' is missing the sub/segment context for automatic mode. Ignoring.');
    }
    return next(args);
  }
  const subsegment = segment.notTraced ? segment.addNewSubsegmentWithoutSampling(service) : segment.addNewSubsegment(service);
  subsegment.addAttribute('namespace', 'aws');
  const parent = segment instanceof Subsegment ? segment.segment : segment;
  const data = parent.segment ? parent.segment.additionalTraceData : parent.additionalTraceData;
  let traceHeader = stringify({ Root: parent.trace_id, Parent: subsegment.id, Sampled: subsegment.notTraced ? '0' : '1' }, ';');
  if (data != null) {
    for (const [key, value] of Object.entries(data)) traceHeader += ';' + key + '=' + value;
  }
  if (!segment.noOp) args.request.headers['X-Amzn-Trace-Id'] = traceHeader;
  let res;
  try {
    res = await next(args);
    if (!res) throw new Error('Failed to get response from instrumented AWS Client.');
    const [aws, http] = await buildAttributesFromMetadata(service, operation, await config.region(), commandInput, res, null);
    subsegment.addAttribute('aws', aws);
    subsegment.addAttribute('http', http);
    addFlags(http, subsegment);
    subsegment.close();
    return res;
  } catch (err) {
    if (err.$metadata) {
      const [aws, http] = await buildAttributesFromMetadata(service, operation, await config.region(), commandInput, null, err);
      subsegment.addAttribute('aws', aws);
      subsegment.addAttribute('http', http);
      addFlags(http, subsegment, err);
    }
    const errObj = { message: err.message, name: err.name, stack: err.stack || new Error().stack };
    subsegment.close(errObj, true);
    throw err;
  }
};

/**
 * `aws3_p.js`'s `captureAWSClient` (the SDK's `captureAWSv3Client`): instruments an AWS SDK v3
 * client with the X-Ray middleware, replacing an earlier one.
 */
function captureAWSClient(client, manualSegment) {
  client.middlewareStack.remove(XRAY_PLUGIN_NAME);
  client.middlewareStack.use({
    applyToStack: (stack) => {
      stack.add(getXRayMiddleware(client.config, manualSegment), { name: XRAY_PLUGIN_NAME, step: 'build' });
    },
  });
  return client;
}

module.exports = { captureAWSClient };
