import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

/** What a test says about a request; everything else gets API Gateway's usual values. */
export interface HttpEventInput {
  method?: string;
  /** The route key's path template, e.g. `/callbacks/kyc/{token}`. */
  routePath: string;
  /** The concrete path, e.g. `/callbacks/kyc/abc`. */
  path: string;
  pathParameters?: Record<string, string>;
  headers?: Record<string, string>;
  /** A string is sent as is; an object is JSON-serialized. */
  body?: string | object;
  isBase64Encoded?: boolean;
  sourceIp?: string;
}

/**
 * A typed HTTP API (payload v2.0) event, shaped like API Gateway's: lower-cased header names,
 * requestContext.http with the source address, the body as text unless base64 is asked for.
 */
export function httpApiEvent(input: HttpEventInput): APIGatewayProxyEventV2 {
  const method = input.method ?? 'POST';
  const routeKey = `${method} ${input.routePath}`;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? { 'content-type': 'application/json' })) {
    headers[name.toLowerCase()] = value;
  }
  const text = input.body === undefined ? undefined : typeof input.body === 'string' ? input.body : JSON.stringify(input.body);
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: input.path,
    rawQueryString: '',
    headers,
    ...(input.pathParameters ? { pathParameters: input.pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'test',
      domainName: 'test.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'test',
      http: { method, path: input.path, protocol: 'HTTP/1.1', sourceIp: input.sourceIp ?? '203.0.113.10', userAgent: 'test' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    ...(text === undefined ? {} : { body: input.isBase64Encoded ? Buffer.from(text).toString('base64') : text }),
    isBase64Encoded: input.isBase64Encoded ?? false,
  };
}

/** POST /callbacks/kyc/{token} with a JSON body. */
export function kycCallbackEvent(
  token: string,
  body: string | object,
  overrides: Partial<Omit<HttpEventInput, 'routePath' | 'path' | 'body'>> = {},
): APIGatewayProxyEventV2 {
  return httpApiEvent({
    routePath: '/callbacks/kyc/{token}',
    path: `/callbacks/kyc/${encodeURIComponent(token)}`,
    pathParameters: { token },
    body,
    ...overrides,
  });
}

/** POST /callbacks/payout-notifications with a JSON body and, when given, an Authorization header. */
export function payoutNotificationEvent(
  body: string | object,
  authorization: string | undefined,
  overrides: Partial<Omit<HttpEventInput, 'routePath' | 'path' | 'body'>> = {},
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(overrides.headers ?? {}) };
  if (authorization !== undefined) headers.authorization = authorization;
  return httpApiEvent({
    routePath: '/callbacks/payout-notifications',
    path: '/callbacks/payout-notifications',
    body,
    ...overrides,
    headers,
  });
}

/** A Lambda context for invoking handlers directly. */
export function lambdaContext(functionName = 'payrelay-test'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
