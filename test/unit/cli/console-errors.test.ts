import { describe, expect, it } from 'vitest';
import { createConsoleApp } from '@cli/console/app';
import type { ConsoleServices } from '@cli/console/services';

/*
 * The console's error pages, without a browser or a stack: every service call fails with an error
 * whose message stands for what a dependency might say (a table name, a key, a value).
 */

class StoreBrokeError extends Error {
  override name = 'StoreBrokeError';
}
const DETAIL = 'ValidationException on table payrelay-prod-payouts: key pk=m-1|GHS|WD-1';

/** Services whose every method rejects with StoreBrokeError (the target's label aside). */
const failing = new Proxy(
  {},
  {
    get: (_, name) =>
      name === 'target'
        ? { label: 'unit' }
        : new Proxy(() => Promise.reject(new StoreBrokeError(DETAIL)), { get: () => () => Promise.reject(new StoreBrokeError(DETAIL)) }),
  },
) as unknown as ConsoleServices;

const secrets = { token: 'token-of-this-start', csrf: 'csrf-of-this-start' };
const app = createConsoleApp({ services: failing, secrets, port: () => 8080 });
const headers = { host: 'localhost:8080', cookie: `payrelay_console=${secrets.token}` };

describe('console error pages', () => {
  it('a failure inside the console is a 500 page with a generic sentence and the error class, never its message', async () => {
    const answer = await app.request('/payouts?state=SUCCEEDED', { headers });
    expect(answer.status).toBe(500);
    const body = await answer.text();
    expect(body).toContain('The request failed inside the console (StoreBrokeError).');
    expect(body).not.toContain('ValidationException');
    expect(body).not.toContain('payrelay-prod-payouts');
  });

  it('a Referer that is not a URL leaves the refused action without a "Back" link, not a 500', async () => {
    const form = new URLSearchParams({ csrf: secrets.csrf, since: 'nope', until: 'later' });
    for (const referer of ['not a url', 'http://[', '::']) {
      const answer = await app.request('/callbacks/replay', {
        method: 'POST',
        headers: { ...headers, referer, 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      expect(answer.status, referer).toBe(400);
      expect(await answer.text(), referer).toContain('Received from: must be an ISO-8601 time');
    }
    // A Referer of the console itself still leads back.
    const back = await app.request('/callbacks/replay', {
      method: 'POST',
      headers: { ...headers, referer: 'http://localhost:8080/callbacks?day=2026-11-20', 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(back.status).toBe(400);
    expect(await back.text()).toContain('/callbacks?day=2026-11-20');
  });
});

describe('console on a stage without KYC', () => {
  /** Services like `failing`, with the target of a stack whose stage leaves KYC out, or not. */
  const servicesFor = (kycNotDeployed: boolean): ConsoleServices =>
    new Proxy(failing, { get: (target, name) => (name === 'target' ? { label: 'unit', ...(kycNotDeployed ? { kycNotDeployed } : {}) } : Reflect.get(target, name)) });

  it('leaves the KYC page out of the navigation there, and only there', async () => {
    for (const kycNotDeployed of [true, false]) {
      const kycApp = createConsoleApp({ services: servicesFor(kycNotDeployed), secrets, port: () => 8080 });
      const body = await (await kycApp.request('/payouts?state=SUCCEEDED', { headers })).text();
      expect(body.includes('href="/kyc"'), `kycNotDeployed ${kycNotDeployed}`).toBe(!kycNotDeployed);
      expect(body).toContain('href="/collections"');
    }
  });
});

describe('the resolve form when the stored notifications cannot be read', () => {
  it('says so on the form instead of failing the page (the resolve reads them again)', async () => {
    const { Payout } = await import('@shared/domain/payout');
    const t = new Date('2026-11-25T01:00:00.000Z');
    const identity = { platform_merchant_id: 'm-1', currency: 'GHS', withdrawal_reference: 'WD-R1' };
    const review = Payout.accept({ identity, amount: '5.00', accountMasked: '******3456', accountCode: 'MTN' }, t)
      .startVerifying(t)
      .startSubmitting(t, 'Ama Mensah')
      .unknown('time-out after sending', t)
      .needsReview('provider does not know this withdrawal_reference after 15 minutes', t);
    const throttled = () => Promise.reject(new StoreBrokeError(DETAIL));
    const services = new Proxy(failing, {
      get: (target, name) => {
        if (name === 'payouts') return new Proxy({}, { get: (_, method) => (method === 'get' ? async () => review : throttled) });
        if (name === 'defaultOperator') return async () => 'ops';
        const down = () => Promise.reject(new Error('provider down'));
        if (name === 'operator') return { provider: { getPayout: down }, credentials: { get: down }, notifications: { listCallbacks: throttled, get: throttled } };
        return Reflect.get(target, name);
      },
    });
    const form = createConsoleApp({ services, secrets, port: () => 8080 });
    const answer = await form.request(`/review/resolve?key=${encodeURIComponent('m-1|GHS|WD-R1')}`, { headers });
    expect(answer.status).toBe(200);
    const body = await answer.text();
    expect(body).toContain('They could not be read now (StoreBrokeError)');
    expect(body).not.toContain('ValidationException');
    expect(body).toContain('name="evidence"');
  });
});
