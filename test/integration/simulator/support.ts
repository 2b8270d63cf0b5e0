import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { credentialsFromSecret, PayoutServiceClient, type PayoutServiceClientOptions } from '@shared/providers/payout-client';
import { startSimulator, type SimulatorHandle, type SimulatorOptions } from '@simulator/index';

/**
 * A fresh simulator for each test of the file that calls this (once, at its top): `start` launches it
 * without logs; after each test what was handed to `onCleanup` is closed, in order, then the simulator stops.
 */
export function simulatorPerTest(): {
  start(options?: SimulatorOptions): Promise<SimulatorHandle>;
  onCleanup(...cleanups: Array<() => unknown>): void;
} {
  let sim: SimulatorHandle | undefined;
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
    await sim?.stop();
    sim = undefined;
  });
  return {
    start: async (options = {}) => {
      sim = await startSimulator({ log: 'silent', ...options });
      return sim;
    },
    onCleanup: (...more) => {
      cleanups.push(...more);
    },
  };
}

/** One POST received by the test receiver. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A partner-side HTTP endpoint on 127.0.0.1 that records what the simulator posts to it. */
export async function startReceiver(): Promise<{ url: string; received: Received[]; stop(): Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '/', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A payout client against the simulator plus the credentials of a fresh partner. */
export function payoutFixture(sim: SimulatorHandle, options: Partial<PayoutServiceClientOptions> = {}, partnerCode = 'acme') {
  const secret = sim.admin.createPartner({ partner_code: partnerCode, email: `${partnerCode}@example.test` });
  const client = new PayoutServiceClient({ baseUrl: sim.payoutBaseUrl, timeoutMs: 2000, ...options });
  return { client, secret, creds: credentialsFromSecret(secret) };
}

/** A payout to a seeded GHS mobile-money account. */
export const ghsPayout = (withdrawal_reference: string, amount = '25.50') => ({
  amount,
  account_number: '0244123456',
  account_code: 'MTN',
  currency: 'GHS',
  withdrawal_reference,
});
