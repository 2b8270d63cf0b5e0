import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kycCallbackEvent } from '@test/factories/http-events';
import { bodyOf, CALLBACK_TOKEN, startReceiverStack, type ReceiverStack } from './receiver-stack';

let stack: ReceiverStack;

beforeAll(async () => {
  // Handlers read WEBHOOK_ALLOWED_IPS at module load, hence a stack (and process) of its own.
  stack = await startReceiverStack({ stage: 'allow', env: { WEBHOOK_ALLOWED_IPS: '198.51.100.0/24' } });
});

afterAll(async () => {
  await stack?.stop();
});

const callback = {
  status: 'init',
  event: 'applicantCreated',
  timestamp: '2026-11-22T09:00:00.000Z',
  user_reference: 'user-allow',
  meta_data: { kyc_status: 'awaiting_approval' },
};

describe('WEBHOOK_ALLOWED_IPS on the deployed handlers', () => {
  it('answers 403 to a source outside the list, even with the right token, and stores nothing', async () => {
    const result = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, callback, { sourceIp: '203.0.113.50' }));
    expect(result.statusCode).toBe(403);
    expect(bodyOf(result)).toEqual({ error: 'forbidden', message: 'source address not allowed' });
    expect(await stack.scan(stack.local.names.eventsTable)).toEqual([]);
  });

  it('refuses a real HTTP post from loopback through the gateway, since loopback is not on the list', async () => {
    const res = await fetch(`${stack.gateway.url}/callbacks/kyc/${CALLBACK_TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(callback),
    });
    expect(res.status).toBe(403);
  });

  it('accepts a listed source', async () => {
    const result = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, callback, { sourceIp: '198.51.100.7' }));
    expect(result.statusCode).toBe(200);
  });
});
