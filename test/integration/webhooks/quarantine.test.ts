import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQuarantineStore } from '@shared/adapters/quarantine-store';
import { calibrateFromQuarantine } from '@shared/app/quarantine';
import type { QuarantineStore } from '@shared/ports/quarantine';
import { payoutKey } from '@shared/domain/identity';
import { resolveSigningProfile, withSignature } from '@shared/signing';
import { runPayrelay } from '@test/support/payrelay-cli';
import { writeLocalState } from '@local/state';
import {
  knownPayout as knownPayoutOf,
  payoutIdentity,
  payoutItem as payoutItemOf,
  startReceiverStack,
  type ReceiverStack,
} from './receiver-stack';

/*
 * End to end through the local HTTP API gateway: a notification with the partner public key but a
 * signature made by a scheme payrelay is not configured for is refused, kept in the quarantine
 * (never in the events table, never applied), makes its known payout due at most once per window,
 * and calibrates the scheme.
 */

const MAX_PER_HOUR = 6;
let stack: ReceiverStack;
let quarantine: QuarantineStore;

beforeAll(async () => {
  stack = await startReceiverStack({
    stage: 'quarantine',
    simulator: { notifyOnSettle: false },
    env: { QUARANTINE_MAX_PER_HOUR: String(MAX_PER_HOUR), MISMATCH_NUDGE_MINUTES: '15' },
  });
  quarantine = createQuarantineStore({ tableName: stack.local.names.quarantineTable, client: stack.doc });
});

afterAll(async () => {
  await stack?.stop();
});

const knownPayout = (reference: string): Promise<void> => knownPayoutOf(stack, reference);
const payoutItem = (reference: string) => payoutItemOf(stack, reference);
const payoutsTable = (): string => stack.local.names.payoutsTable;

async function pushNextCheck(reference: string, to: Date): Promise<void> {
  await stack.doc.send(
    new UpdateCommand({
      TableName: payoutsTable(),
      Key: { pk: payoutKey(payoutIdentity(stack, reference)) },
      UpdateExpression: 'SET nextCheckAt = :at',
      ExpressionAttributeValues: { ':at': to.toISOString() },
    }),
  );
}

/** The provider's real scheme, which payrelay (on the default profile) does not know yet. */
const PROVIDER_PROFILE = resolveSigningProfile('sha512-secret-body/compact-sorted/base64/orderNotification=partner');

function providerNotification(reference: string, message = 'Order notification'): string {
  const body = {
    status: 'success',
    message,
    data: { payment: { status: 'PAID' }, order_details: { status: 'COMPLETED', partner_order_id: reference } },
  };
  const secrets = { partnerSecret: stack.partner.partner_secret_key, merchantSecret: stack.partner.merchant_secret_key };
  return JSON.stringify(withSignature(body, 'orderNotification', secrets, PROVIDER_PROFILE));
}

async function post(body: string, authorization = `Bearer ${stack.partner.partner_public_key}`): Promise<number> {
  const response = await fetch(`${stack.gateway.url}/callbacks/payout-notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

const everything = (): Promise<Awaited<ReturnType<QuarantineStore['list']>>> =>
  quarantine.list(new Date(Date.now() - 86_400_000), new Date(Date.now() + 60_000), 1000);

async function storedEvents(): Promise<number> {
  return (await stack.scan(stack.local.names.eventsTable)).length;
}

describe('the quarantine of mismatched order notifications', () => {
  it('keeps a notification whose signature does not match, answers 401, stores no event, applies nothing', async () => {
    const eventsBefore = await storedEvents();
    const body = providerNotification('Q-first');
    expect(await post(body)).toBe(401);
    expect(await storedEvents()).toBe(eventsBefore);
    const kept = (await everything()).find((n) => n.body === body);
    expect(kept).toMatchObject({ withdrawalReference: 'Q-first', id: expect.stringMatching(/^\d{4}-\d{2}-\d{2}\.[0-9a-f]{16}$/) });
    expect(await quarantine.get(kept?.id as string)).toEqual(kept);
    // A redelivery of the same body the same day is one entry.
    expect(await post(body)).toBe(401);
    expect((await everything()).filter((n) => n.body === body)).toHaveLength(1);
  });

  it('keeps nothing without the partner public key, or for a hostile shape', async () => {
    const before = (await everything()).length;
    expect(await post(providerNotification('Q-nokey'), 'Bearer not-the-public-key')).toBe(401);
    const body = providerNotification('Q-twice');
    expect(await post(`${body.slice(0, -1)},"signature":"x"}`)).toBe(400);
    expect((await everything()).length).toBe(before);
  });

  it('calibrates the provider scheme from what it kept', async () => {
    const secrets = { partnerSecret: stack.partner.partner_secret_key, merchantSecret: stack.partner.merchant_secret_key };
    const result = await calibrateFromQuarantine(quarantine, secrets, {
      since: new Date(Date.now() - 3_600_000),
      until: new Date(Date.now() + 60_000),
      limit: 50,
    });
    expect(result.tried).toBeGreaterThan(0);
    expect(result.profiles[0]).toMatchObject({ profile: { name: PROVIDER_PROFILE.name }, reproduced: result.tried });
  });

  it('lists, shows and calibrates from the quarantine with the payrelay CLI, as an operator would', async () => {
    const stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-quarantine-')), 'state.json');
    const urls = { gateway: stack.gateway.url, kycCallback: '', payoutNotification: '', payoutApi: '', kycApi: '' };
    writeLocalState({ pid: process.pid, startedAt: new Date().toISOString(), stage: 'quarantine', urls, env: stack.local.env }, stateFile);
    const cli = async (...args: string[]): Promise<unknown> => {
      const run = await runPayrelay(stateFile, ['--json', ...args]);
      expect(run, run.stderr).toMatchObject({ code: 0 });
      return JSON.parse(run.stdout) as unknown;
    };
    const listed = (await cli('events', 'quarantine', 'list', '--since', '1h')) as Array<{ id: string; withdrawalReference?: string }>;
    const first = listed.find((n) => n.withdrawalReference === 'Q-first');
    expect(first).toBeDefined();
    expect(await cli('events', 'quarantine', 'show', first?.id as string)).toMatchObject({ body: providerNotification('Q-first') });
    const calibrated = (await cli('signature', 'calibrate', '--from-quarantine', '--since', '1h')) as { tried: number; profiles: Array<{ profile: string; reproduced: number }> };
    expect(calibrated.profiles[0]).toEqual(expect.objectContaining({ profile: PROVIDER_PROFILE.name, reproduced: calibrated.tried }));
  });

  it('makes a known payout due for reconciliation, at most once per payout per window, changing nothing else', async () => {
    await knownPayout('Q-due');
    const before = await payoutItem('Q-due');
    expect(await post(providerNotification('Q-due'))).toBe(401);
    const after = await payoutItem('Q-due');
    expect(Date.parse(String(after?.nextCheckAt))).toBeLessThan(Date.parse(String(before?.nextCheckAt)));
    expect(after).toMatchObject({ state: before?.state, version: before?.version });

    // Within the window a second mismatch about the same payout does not move it again.
    const later = new Date(Date.now() + 3_600_000);
    await pushNextCheck('Q-due', later);
    expect(await post(providerNotification('Q-due', 'again'))).toBe(401);
    expect((await payoutItem('Q-due'))?.nextCheckAt).toBe(later.toISOString());
  });

  it('keeps at most QUARANTINE_MAX_PER_HOUR a hour, so a flood cannot fill it', async () => {
    for (let i = 0; i < MAX_PER_HOUR + 4; i += 1) expect(await post(providerNotification(`Q-flood-${i}`))).toBe(401);
    const all = await everything();
    const perHour = new Map<string, number>();
    for (const n of all) perHour.set(n.receivedAt.slice(0, 13), (perHour.get(n.receivedAt.slice(0, 13)) ?? 0) + 1);
    // The cap counts every attempt to keep (a same-day redelivery too), so an hour holds at most the cap.
    expect(Math.max(...perHour.values())).toBeLessThanOrEqual(MAX_PER_HOUR);
    const flood = all.filter((n) => n.withdrawalReference?.startsWith('Q-flood-'));
    expect(flood.length).toBeGreaterThan(0);
    expect(flood.length).toBeLessThan(MAX_PER_HOUR + 4);
  });
});
