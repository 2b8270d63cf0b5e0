import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '@local/stack';
import { writeLocalState } from '@local/state';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';

/*
 * A collection order from `payrelay collections create` to PAID through the whole local stack (free
 * ports): the CLI asks the simulator's payout service over HTTP, the simulator's customer pays, its
 * signed order notification goes through the gateway to the real receiver, and the CLI reads it back.
 */
const dir = mkdtempSync(join(tmpdir(), 'payrelay-collections-'));
const stateFile = join(dir, 'state.json');
let stack: LocalStack;

const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);
const json = (run: CliRun): Record<string, unknown> => {
  expect(run.stderr.split('\n').filter((l) => l.startsWith('payrelay:'))).toEqual([]);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
};

beforeAll(async () => {
  const { startLocalStack } = await import('@local/stack');
  stack = await startLocalStack({ gatewayPort: 0, simulatorPort: 0, pollWaitSeconds: 1 });
  writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage: 'local', urls: stack.urls, env: stack.env }, stateFile);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('payrelay collections, end to end through the local stack', () => {
  it('create -> the customer pays -> the order notification makes it COMPLETED / PAID; status, list and replay show it; bad input is refused in words', async () => {
    // Independent commands run at once to keep the test short: the creation and two refusals.
    const [createRun, badAmount, unknown] = await Promise.all([
      cli(['--json', 'collections', 'create', '--amount', '40', '--currency', 'GHS', '--order-id', 'E2E-COL-1']),
      cli(['collections', 'create', '--amount', '1.234', '--currency', 'GHS']),
      cli(['collections', 'status', 'NO-SUCH-ORDER']),
    ]);
    expect(badAmount.code).toBe(3);
    expect(badAmount.stderr).toContain('payrelay: amount "1.234" has more than 2 decimals for GHS');
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('payrelay: no collection with order id NO-SUCH-ORDER');
    const created = json(createRun);
    expect(created).toMatchObject({ order_id: 'E2E-COL-1', amount: '40.00', currency: 'GHS', creation: 'accepted', order_status: 'PENDING', payment_status: 'PENDING' });
    expect(created.virtual_account_number).toMatch(/^\d{10}$/);
    const reference = created.order_reference as string;
    // Only the valid order reached the provider.
    expect(stack.simulator?.admin.collectionOrders()).toEqual([expect.objectContaining({ partner_order_id: 'E2E-COL-1', order_reference: reference })]);

    // The customer pays at the provider: its signed notification reaches the receiver through the gateway.
    const [delivery] = (await stack.simulator?.admin.sendOrderNotification({ order_reference: reference })) ?? [];
    expect(delivery?.status).toBe(200);
    // The 200 came once the notification was stored; the callback applier applies it right after.
    await stack.applyNow();

    // The provider refuses the next order (a simulator fault): the command says so and exits 6.
    stack.simulator?.admin.setFaults('collectionOrder', { refusalRate: 1, refusals: [{ status: 400, body: '{"success":false,"message":"amount below the minimum"}' }] });
    const [refusedRun, statusRun, listRun, replayRun] = await Promise.all([
      cli(['collections', 'create', '--amount', '5', '--currency', 'GHS', '--order-id', 'E2E-COL-2']),
      cli(['--json', 'collections', 'status', 'E2E-COL-1']),
      cli(['--json', 'collections', 'list', '--since', '1h', '--payment-status', 'paid']),
      cli(['--json', 'events', 'replay', '--since', '1h']),
    ]);
    stack.simulator?.admin.clearFaults();
    expect(refusedRun.code).toBe(6);
    expect(refusedRun.stderr).toContain('payrelay: the provider refused collection E2E-COL-2; it is FAILED: createCollectionOrder: ');
    expect(refusedRun.stderr).toContain('amount below the minimum');
    const status = json(statusRun);
    expect(status).toMatchObject({ order_status: 'COMPLETED', payment_status: 'PAID', order_reference: reference });
    expect((status.history as Array<{ cause: string; eventId?: string }>).at(-1)).toMatchObject({ cause: 'notification', eventId: expect.stringMatching(/^payout-notification#/) });
    const listed = json(listRun);
    expect((listed.collections as Array<{ order_id: string }>).map((c) => c.order_id)).toEqual(['E2E-COL-1']);
    expect(listed.cursor).toBeNull();
    // Replaying the stored notification changes nothing: the collection already reflects it.
    expect(json(replayRun)).toMatchObject({ applied: 0, unchanged: 1 });
    // Seven CLI processes in two rounds: seconds on an idle machine, longer on a loaded one.
  }, 120_000);

  it('an order that could not be sent is recorded, and the error line gives the command that sends it with its id', async () => {
    // Nothing listens on port 9: the request never reaches a provider.
    const unsent = await cli(['--provider-url', 'http://127.0.0.1:9', 'collections', 'create', '--amount', '7', '--currency', 'GHS']);
    expect(unsent.code).toBe(5);
    const line = unsent.stderr.trim().split('\n').at(-1) ?? '';
    const id = /--order-id (col-\S+)$/.exec(line)?.[1];
    expect(line).toMatch(/^payrelay: .*Collection col-\S+ was not sent .*send it with the same id: payrelay collections create --amount 7 --currency GHS --order-id col-\S+$/);
    expect(json(await cli(['--json', 'collections', 'status', id ?? '']))).toMatchObject({ order_id: id, creation: 'requested' });
    expect(json(await cli(['--json', 'collections', 'create', '--amount', '7', '--currency', 'GHS', '--order-id', id ?? '']))).toMatchObject({ order_id: id, creation: 'accepted' });
  }, 60_000);
});
