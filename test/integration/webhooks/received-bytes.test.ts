import { createHmac } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knownPayout as knownPayoutOf, payoutItem, startReceiverStack, type ReceiverStack } from './receiver-stack';

/*
 * End to end through the local HTTP API gateway: bodies as a real provider writes and sends them
 * (PHP escapes, number spellings, a byte order mark, compression) are accepted and stored once, and
 * hostile ones get a 4xx and store nothing.
 */

let stack: ReceiverStack;

beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'bytes', simulator: { notifyOnSettle: false } });
});

afterAll(async () => {
  await stack?.stop();
});

const knownPayout = (reference: string): Promise<void> => knownPayoutOf(stack, reference, '100.50');

/** The payout's next check once every notification stored so far is applied (the applier runs after the 200). */
async function nextCheckAt(reference: string): Promise<number> {
  await stack.applyNow();
  return Date.parse(String((await payoutItem(stack, reference))?.nextCheckAt));
}

async function storedBodies(): Promise<string[]> {
  return (await stack.scan(stack.local.names.eventsTable)).filter((e) => e.source === 'payout-notification').map((e) => String(e.body));
}

/**
 * The notification text as a PHP provider writes it (json_encode escapes `/` and non-ASCII), with
 * the amount spelled 100.50, signed over exactly that text by the documented scheme (HMAC-SHA512 keyed
 * with merchant then partner secret, hex), and the signature appended as the last member.
 */
function providerText(reference: string, extra = ''): string {
  const unsigned =
    `{"status":"success","message":"Paiement re\\u00e7u \\/ ok","data":{"payment":{"status":"PAID"},` +
    `"virtual_account":{"amount":100.50,"account_name":"Ama K\\u00f6nig","bank_name":"MTN","account_number":"0244123456"},` +
    `"order_details":{"status":"COMPLETED","partner_order_id":"${reference}","order_reference":"ORD-1"}}${extra}}`;
  const key = stack.partner.merchant_secret_key + stack.partner.partner_secret_key;
  const signature = createHmac('sha512', key).update(unsigned, 'utf8').digest('hex');
  return `${unsigned.slice(0, -1)},"signature":"${signature}"}`;
}

async function post(body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${stack.gateway.url}/callbacks/payout-notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.partner.partner_public_key}`, ...headers },
    body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('a notification signed over the exact bytes sent', () => {
  it('is accepted with \\uXXXX escapes, \\/ and 100.50, stored verbatim once, and makes its payout due now', async () => {
    await knownPayout('B-escapes');
    const before = await nextCheckAt('B-escapes');
    const text = providerText('B-escapes');
    // Re-serializing the parsed body would change all three: the check must use the text itself.
    expect(JSON.stringify(JSON.parse(text))).not.toBe(text);

    const first = await post(text);
    expect(first).toMatchObject({ status: 200, json: { received: true, duplicate: false } });
    expect(await nextCheckAt('B-escapes')).toBeLessThan(before);
    expect((await post(text)).json.duplicate).toBe(true);
    expect((await storedBodies()).filter((body) => body === text)).toHaveLength(1);
  });

  it('is refused when one byte of the signed text changes', async () => {
    const text = providerText('B-tampered').replace('100.50', '100.51');
    const before = (await storedBodies()).length;
    expect((await post(text)).status).toBe(401);
    expect((await storedBodies()).length).toBe(before);
  });
});

describe('bodies decoded as a provider sends them', () => {
  it('strips a UTF-8 byte order mark and stores the notification once', async () => {
    const text = providerText('B-bom');
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    expect((await post(withBom)).status).toBe(200);
    expect((await post(text)).json.duplicate).toBe(true);
    expect((await storedBodies()).filter((body) => body === text)).toHaveLength(1);
  });

  it('decodes gzip, deflate and br bodies and stores the notification once', async () => {
    const text = providerText('B-gzip');
    expect((await post(gzipSync(text), { 'content-encoding': 'gzip' })).json).toMatchObject({ received: true, duplicate: false });
    expect((await post(deflateSync(text), { 'content-encoding': 'deflate' })).json.duplicate).toBe(true);
    expect((await post(brotliCompressSync(text), { 'content-encoding': 'br' })).json.duplicate).toBe(true);
    expect((await storedBodies()).filter((body) => body === text)).toHaveLength(1);
  });
});

describe('hostile bodies get a 4xx and store nothing', () => {
  async function expectRefused(body: string | Buffer, status: number, code: string, headers: Record<string, string> = {}): Promise<void> {
    const before = await storedBodies();
    const answer = await post(body, headers);
    expect(answer).toMatchObject({ status, json: { error: code } });
    expect(await storedBodies()).toEqual(before);
  }

  it('a zip bomb: 413 at the decoded-size cap', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(100_000);
    await expectRefused(bomb, 413, 'payload_too_large', { 'content-encoding': 'gzip' });
  });

  it('an unknown encoding: 415; a body that is not what its encoding says: 400', async () => {
    await expectRefused(gzipSync(providerText('B-enc')), 415, 'unsupported_content_encoding', { 'content-encoding': 'compress' });
    await expectRefused(Buffer.from('not gzip at all'), 400, 'undecodable_body', { 'content-encoding': 'gzip' });
  });

  it('a repeated, non-string or only nested signature: 400, never 500', async () => {
    const text = providerText('B-hostile');
    const signature = /"signature":"([0-9a-f]+)"/.exec(text)?.[1] as string;
    await expectRefused(`${text.slice(0, -1)},"signature":"${signature}"}`, 400, 'malformed_payload');
    await expectRefused(`{"sign\\u0061ture":"x",${text.slice(1)}`, 400, 'malformed_payload');
    await expectRefused(text.replace(`"signature":"${signature}"`, '"signature":["x"]'), 400, 'malformed_payload');
    await expectRefused(text.replace(`"signature":"${signature}"`, '"signature":""'), 400, 'malformed_payload');
    await expectRefused(
      text.replace(`,"signature":"${signature}"`, '').replace('"data":{', `"data":{"signature":"${signature}",`),
      400,
      'malformed_payload',
    );
  });
});
