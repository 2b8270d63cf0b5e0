import fc from 'fast-check';

/*
 * Generators of hostile input for the receivers and the worker: random JSON, deep nesting, huge
 * strings, wrong types, prototype keys, invalid UTF-8, empty bodies, broken headers.
 */

/** A request body as API Gateway hands it over: text, or base64 with isBase64Encoded. */
export interface HostileBody {
  kind: string;
  text?: string;
  base64?: string;
}

const anyJson = fc.jsonValue({ maxDepth: 3 });

function nest(depth: number, shape: 'array' | 'object', leaf = '1'): string {
  return shape === 'array' ? '['.repeat(depth) + leaf + ']'.repeat(depth) : '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

/** Sets `value` at a dotted path of a copy of `base` (creating objects on the way). */
function setPath(base: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  const parts = path.split('.');
  let node: Record<string, unknown> = copy;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    node[part] = next !== null && typeof next === 'object' && !Array.isArray(next) ? next : {};
    node = node[part] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1] as string;
  if (value === undefined) delete node[last];
  else Object.defineProperty(node, last, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** A well-formed KYC callback of the documented shape. */
export function validKycCallback(userReference: string): Record<string, unknown> {
  return {
    event: 'applicantReviewed',
    status: 'completed',
    order: 'order-hostile-1',
    user_reference: userReference,
    timestamp: '2026-03-01T10:00:00.000Z',
    meta_data: { kyc_status: 'approved', kyc_note: 'documents ok' },
    first_name: 'Ama',
    last_name: 'Mensah',
  };
}

/** A well-formed order notification body (unsigned) about one withdrawal_reference. */
export function validNotification(withdrawalReference: string): Record<string, unknown> {
  return {
    status: 'PAID',
    message: 'payment received',
    data: {
      withdrawal_reference: withdrawalReference,
      payment: { status: 'PAID' },
      order_details: { status: 'COMPLETED', partner_order_id: withdrawalReference },
    },
  };
}

const KYC_FIELDS = ['user_reference', 'status', 'event', 'timestamp', 'order', 'meta_data', 'meta_data.kyc_status', 'meta_data.kyc_note', 'first_name'];
const NOTIFICATION_FIELDS = ['status', 'data', 'data.withdrawal_reference', 'data.order_details.partner_order_id', 'data.payment', 'data.payment.status', 'message'];

/** Hostile bodies for a receiver; `route` picks which near-valid shape gets mutated. */
export function hostileBodyArb(route: 'kyc' | 'notification'): fc.Arbitrary<HostileBody> {
  const valid = route === 'kyc' ? validKycCallback('user-hostile-1') : validNotification('wr-hostile-1');
  const fields = route === 'kyc' ? KYC_FIELDS : NOTIFICATION_FIELDS;
  const text = (kind: string) => (t: string): HostileBody => ({ kind, text: t });
  return fc.oneof(
    fc.json({ maxDepth: 4 }).map(text('random-json')),
    fc
      .tuple(fc.constantFrom(...fields), fc.oneof(anyJson, fc.constant(undefined)))
      .map(([path, value]) => JSON.stringify(setPath(valid, path, value)))
      .map(text('near-valid')),
    fc
      .record(Object.fromEntries(fields.filter((f) => !f.includes('.')).map((f) => [f, anyJson])), { requiredKeys: [] })
      .map((o) => JSON.stringify(o))
      .map(text('wrong-types')),
    fc
      .tuple(fc.constantFrom(64, 2_000, 20_000, 100_000), fc.constantFrom('array' as const, 'object' as const))
      .map(([depth, shape]) => nest(depth, shape, shape === 'object' ? JSON.stringify(valid) : '1'))
      .map(text('deep-nesting')),
    fc
      .tuple(fc.constantFrom(...fields.filter((f) => f !== 'data' && f !== 'meta_data' && f !== 'data.payment')), fc.constantFrom(1_100, 2_100, 5_000, 60_000, 130_000, 200_000, 300_000))
      .map(([path, length]) => JSON.stringify(setPath(valid, path, 'Z'.repeat(length))))
      .map(text('huge-string')),
    fc
      .constantFrom(
        '{"__proto__":{"user_reference":"polluted","status":"completed","meta_data":{"kyc_status":"approved"}},"status":"pending"}',
        '{"constructor":{"prototype":{"polluted":true}},"user_reference":"user-hostile-1","status":"pending"}',
        '{"__proto__":null,"data":{"__proto__":{"withdrawal_reference":"wr-hostile-1"}}}',
        '{"data":{"constructor":"x","withdrawal_reference":{"toString":"x"}},"hasOwnProperty":1}',
        `{"__proto__":${JSON.stringify(valid)}}`,
      )
      .map(text('prototype-keys')),
    fc
      .tuple(fc.uint8Array({ maxLength: 200 }), fc.boolean())
      .map(([bytes, wrapInJson]): HostileBody => {
        const payload = wrapInJson
          ? Buffer.concat([Buffer.from('{"user_reference":"'), Buffer.from(bytes), Buffer.from([0xff, 0xfe, 0xc0, 0x80]), Buffer.from('","status":"pending"}')])
          : Buffer.concat([Buffer.from(bytes), Buffer.from([0xc3, 0x28])]);
        return { kind: 'invalid-utf8', base64: payload.toString('base64') };
      }),
    fc.constantFrom<HostileBody>(
      { kind: 'invalid-base64', base64: '!!!not*base64%%%' },
      { kind: 'empty', text: undefined },
      { kind: 'empty', text: '' },
      { kind: 'empty', text: ' \n\t ' },
      { kind: 'empty', text: 'null' },
      { kind: 'empty', text: '[]' },
      { kind: 'empty', text: '{}' },
      { kind: 'empty', text: '""' },
      { kind: 'empty', text: '0' },
      { kind: 'empty', base64: '' },
    ),
    fc.string({ unit: 'binary', maxLength: 300 }).map(text('garbage')),
    fc.string({ maxLength: 40 }).map((s) => `{"user_reference":"${s}`).map(text('truncated-json')),
  );
}

/** Header sets: missing, wrong, duplicated (HTTP API joins repeats with a comma), odd casing. */
export const headerVariantArb: fc.Arbitrary<Record<string, string> | undefined> = fc.constantFrom<Record<string, string> | undefined>(
  { 'content-type': 'application/json' },
  { 'content-type': 'application/json; charset=utf-8' },
  {},
  undefined,
  { 'content-type': 'text/plain' },
  { 'content-type': 'application/x-www-form-urlencoded' },
  { 'content-type': '' },
  { 'content-type': 'application/json,application/json' },
  { 'Content-Type': 'application/json', 'content-type': 'text/html' },
  { 'CONTENT-TYPE': 'APPLICATION/JSON' },
  { 'content-type': 'application/problem+json' },
  { 'content-length': '-1', 'content-type': 'application/json' },
);

/** Forged KYC tokens: missing, empty, near-misses, huge, odd characters. */
export function forgedTokenArb(real: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constantFrom<string | undefined>(undefined, '', real.toUpperCase(), `${real}x`, real.slice(0, -1), ` ${real}`, `${real}\u0000`, 'A'.repeat(10_000), '../../etc/passwd', '%00'),
    fc.string({ maxLength: 64 }).filter((s) => s !== real),
    fc.nat({ max: real.length - 1 }).map((i) => real.slice(0, i) + (real[i] === 'a' ? 'b' : 'a') + real.slice(i + 1)),
  );
}

/** Forged Authorization values for order notifications. */
export function forgedAuthorizationArb(realKey: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constantFrom<string | undefined>(
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${realKey}x`,
      `Bearer ${realKey.slice(0, -1)}`,
      `Basic ${realKey}`,
      `Bearer ${realKey}, Bearer ${realKey}`,
      `Bearer ${'k'.repeat(10_000)}`,
    ),
    fc.string({ maxLength: 64 }).filter((s) => s.trim().replace(/^bearer\s+/i, '') !== realKey),
  );
}
