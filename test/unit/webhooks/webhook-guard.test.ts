import middy from '@middy/core';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '@shared/config/env';
import { AllowListError, MAX_WEBHOOK_BODY_BYTES, parseAllowList, webhookEnvSchema } from '@shared/config/webhook';
import { acknowledge, jsonDepth, MAX_JSON_DEPTH, webhookGuard, webhookOf, type WebhookEvent } from '@shared/http/webhook';
import { WebhookUnauthorizedError } from '@shared/domain/errors';
import { logger } from '@shared/observability/logger';
import { httpApiEvent, lambdaContext } from '@test/factories/http-events';

/** A handler behind the guard that echoes what the guard handed over, or throws what it is told. */
function guarded(options: Parameters<typeof webhookGuard>[0], fail?: Error) {
  const handler = middy<WebhookEvent, APIGatewayProxyStructuredResultV2>()
    .use(webhookGuard(options))
    .handler(async (event) => {
      if (fail) throw fail;
      return { statusCode: 200, body: JSON.stringify({ payload: webhookOf(event).payload, body: webhookOf(event).body }) };
    });
  return (input: Partial<Parameters<typeof httpApiEvent>[0]> = {}) =>
    handler(httpApiEvent({ routePath: '/hook', path: '/hook', body: '{"a":1}', ...input }), lambdaContext());
}

describe('webhook guard', () => {
  it('hands the verbatim body and its parse to the handler', async () => {
    const result = await guarded({ maxBodyBytes: 100 })({ body: '{ "a" : 1 }' });
    expect(JSON.parse(result.body ?? '')).toEqual({ payload: { a: 1 }, body: '{ "a" : 1 }' });
  });

  it('counts the limit in bytes of the decoded body', async () => {
    const call = guarded({ maxBodyBytes: 12 });
    expect((await call({ body: '{"a":"eee"}' })).statusCode).toBe(200); // 11 bytes
    expect((await call({ body: '{"a":"ééé"}' })).statusCode).toBe(413); // 11 characters, 14 bytes
    expect((await call({ body: '{"a":"eee"}', isBase64Encoded: true })).statusCode).toBe(200); // 16 base64 characters, 11 bytes
  });

  it('refuses JSON nested deeper than the limit with 400, without recursing into it', async () => {
    const call = guarded({ maxBodyBytes: 1_000_000 });
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const result = await call({ body: deep });
    expect(result.statusCode).toBe(400);
    expect(result.body).toContain(`deeper than ${MAX_JSON_DEPTH}`);
    expect((await call({ body: `${'{"a":'.repeat(MAX_JSON_DEPTH - 1)}1${'}'.repeat(MAX_JSON_DEPTH - 1)}` })).statusCode).toBe(200);
  });

  it('measures depth ignoring brackets inside strings and escaped quotes', () => {
    expect(jsonDepth('{"a":"[[[{{{","b":["\\"]","x"]}')).toBe(2);
    expect(jsonDepth('"just a string"')).toBe(0);
  });

  it('answers 403 to a source outside the allow-list, before reading the body', async () => {
    const call = guarded({ maxBodyBytes: 10, allowList: parseAllowList('198.51.100.0/24, 2001:db8::1') });
    expect((await call({ sourceIp: '203.0.113.9', body: 'x'.repeat(50) })).statusCode).toBe(403);
    expect((await call({ sourceIp: '198.51.100.77', body: '{}' })).statusCode).toBe(200);
    expect((await call({ sourceIp: '2001:db8::1', body: '{}' })).statusCode).toBe(200);
  });

  it('maps an unexpected failure to a generic 500 without the error text, and logs it', async () => {
    const error = vi.spyOn(logger, 'error').mockImplementation(() => {});
    const result = await guarded({ maxBodyBytes: 100 }, new Error('dynamo exploded at secret-table'))();
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('exploded');
    expect(error).toHaveBeenCalledOnce();
    error.mockRestore();
  });

  it('never tells the caller which authentication check failed', async () => {
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => {});
    const result = await guarded({ maxBodyBytes: 100 }, new WebhookUnauthorizedError('signature', 'signature does not match'))();
    expect(result.statusCode).toBe(401);
    expect(result.body).not.toContain('signature');
    expect(warn).toHaveBeenCalledWith('webhook refused', expect.objectContaining({ check: 'signature', statusCode: 401 }));
    warn.mockRestore();
  });

  it('acknowledges with the event id and whether it was a duplicate', () => {
    expect(JSON.parse(acknowledge({ eventId: 'kyc#1', outcome: 'duplicate', recognized: true }).body ?? '')).toEqual({
      received: true,
      duplicate: true,
      eventId: 'kyc#1',
    });
  });
});

describe('WEBHOOK_MAX_BODY_BYTES', () => {
  it('defaults to 256 KiB and refuses a limit a stored event could not fit in', () => {
    expect(loadConfig(webhookEnvSchema, {}).WEBHOOK_MAX_BODY_BYTES).toBe(262_144);
    expect(() => loadConfig(webhookEnvSchema, { WEBHOOK_MAX_BODY_BYTES: String(MAX_WEBHOOK_BODY_BYTES + 1) })).toThrow(
      /WEBHOOK_MAX_BODY_BYTES/,
    );
  });
});

describe('WEBHOOK_ALLOWED_IPS', () => {
  it('means no restriction only when unset: a list naming no address is refused at load, never read as "allow all"', () => {
    expect(loadConfig(webhookEnvSchema, {}).WEBHOOK_ALLOWED_IPS).toBeUndefined();
    expect(() => loadConfig(webhookEnvSchema, { WEBHOOK_ALLOWED_IPS: ' , ' })).toThrow(
      'invalid configuration: WEBHOOK_ALLOWED_IPS: names no address: list IP addresses or CIDR blocks separated by commas, or unset it to allow every address',
    );
    expect(() => loadConfig(webhookEnvSchema, { WEBHOOK_ALLOWED_IPS: '  ' })).toThrow(
      'invalid configuration: WEBHOOK_ALLOWED_IPS: is empty: unset it to use the default (every source address allowed), or give a value',
    );
    expect(loadConfig(webhookEnvSchema, { WEBHOOK_ALLOWED_IPS: '192.0.2.1, ' }).WEBHOOK_ALLOWED_IPS?.('192.0.2.1')).toBe(true);
  });

  it('rejects an entry that is not an address or a CIDR block at load', () => {
    expect(() => parseAllowList('10.0.0.0/33')).toThrow(AllowListError);
    expect(() => parseAllowList('example.com')).toThrow(AllowListError);
    expect(() => loadConfig(webhookEnvSchema, { WEBHOOK_ALLOWED_IPS: '192.0.2.1,example.com' })).toThrow(
      'invalid configuration: WEBHOOK_ALLOWED_IPS: "example.com" is not an IP address or CIDR block',
    );
  });

  it('never allows a missing or malformed source address', () => {
    const allowed = parseAllowList('0.0.0.0/0');
    expect(allowed?.('')).toBe(false);
    expect(allowed?.('not-an-ip')).toBe(false);
    expect(allowed?.('192.0.2.1')).toBe(true);
  });
});
