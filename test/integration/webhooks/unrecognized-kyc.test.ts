import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventStore } from '@shared/adapters/event-store';
import type { ReceivedEvent } from '@shared/ports/callbacks';
import { kycCallbackEvent } from '@test/factories/http-events';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';
import { writeLocalState } from '@local/state';
import { CALLBACK_TOKEN, startReceiverStack, type ReceiverStack } from './receiver-stack';

/*
 * The on-call walkthrough of an unrecognized KYC callback, on the local stack's code path: the KYC
 * receiver stores an authentic callback with a kyc_status payrelay does not know, and the operator
 * finds it by the user it names (`events list --reference`), reads it with its body masked
 * (`events show`), and `kyc status` says it is there instead of "no callback received".
 */

let stack: ReceiverStack;
let stateFile: string;
const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);

/** A completed KYC callback whose kyc_status payrelay does not know, carrying a phone number to mask. */
const onHold = (userReference: unknown): Record<string, unknown> => ({
  status: 'completed',
  event: 'applicantReviewed',
  order: 'order-h8',
  timestamp: '2026-11-22T09:01:00.000Z',
  user_reference: userReference,
  meta_data: { kyc_note: 'held for review', kyc_status: 'on_hold' },
  first_name: 'Ama',
  phone: '+233244123456',
});

let eventId: string;

beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'unrecognizedkyc' });
  stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-unrecognized-')), 'state.json');
  writeLocalState(
    {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      stage: 'unrecognizedkyc',
      urls: { gateway: stack.gateway.url, kycCallback: '', payoutNotification: '', payoutApi: stack.sim.payoutBaseUrl, kycApi: stack.sim.kycBaseUrl },
      env: { ...stack.local.env, KYC_API_BASE_URL: stack.sim.kycBaseUrl },
    },
    stateFile,
  );
  const answer = await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, onHold('user-h8')));
  expect(answer.statusCode).toBe(200);
  // A hostile one: the right token, a reference that would forge lines on a terminal.
  expect((await stack.kycCallback(kycCallbackEvent(CALLBACK_TOKEN, onHold('user-h8\n\u001b[2J')))).statusCode).toBe(200);
  await stack.applyNow();
  const listed = await createEventStore({ tableName: stack.local.names.eventsTable, client: stack.doc }).listCallbacks({ reference: 'user-h8', limit: 10 });
  expect(listed.events).toHaveLength(1);
  eventId = (listed.events[0] as ReceivedEvent).eventId;
});

afterAll(async () => {
  await stack?.stop();
});

describe('an authentic KYC callback with an unknown kyc_status', () => {
  it('is stored unrecognized and unapplied, under the user_reference its body names', async () => {
    const items = await stack.scan(stack.local.names.eventsTable);
    const stored = items.find((item) => item.pk === eventId);
    expect(stored).toMatchObject({ recognized: false, unrecognizedReason: 'unknown kyc_status "on_hold"', userReference: 'user-h8', referenceKey: 'kyc#user-h8', appId: stack.appId });
    expect(stored).not.toHaveProperty('applyShard');
    expect(stored).not.toHaveProperty('appliedAt');
    // The hostile one is stored too, naming nobody.
    const hostile = items.filter((item) => item.pk !== eventId && item.recognized === false);
    expect(hostile).toHaveLength(1);
    expect(hostile[0]).not.toHaveProperty('userReference');
    expect(hostile[0]).not.toHaveProperty('referenceKey');
  });

  it('is listed by `events list --reference <user_reference>`', async () => {
    const json = await cli(['--json', 'events', 'list', '--reference', 'user-h8']);
    expect(json, json.stderr).toMatchObject({ code: 0 });
    const page = JSON.parse(json.stdout) as { events: ReceivedEvent[]; cursor: string | null };
    expect(page).toEqual({
      events: [expect.objectContaining({ eventId, source: 'kyc', recognized: false, unrecognizedReason: 'unknown kyc_status "on_hold"', userReference: 'user-h8' })],
      cursor: null,
    });
    const human = await cli(['events', 'list', '--reference', 'user-h8']);
    expect(human, human.stderr).toMatchObject({ code: 0 });
    expect(human.stdout).not.toContain('No callbacks match');
    expect(human.stdout).toMatch(/│ kyc +│ user-h8 +│ no: unknown kyc_status "on_hold"/);
  });

  it('is shown by `events show <id>` with its body masked, the hint to replay it, and as JSON', async () => {
    const human = await cli(['events', 'show', eventId]);
    expect(human, human.stderr).toMatchObject({ code: 0 });
    expect(human.stdout).toMatch(/│ user_reference +│ user-h8 +│/);
    expect(human.stdout).toMatch(/│ recognized +│ no: unknown kyc_status "on_hold" +│/);
    expect(human.stdout).toContain('payrelay events replay --since ');
    expect(human.stdout).toContain('body as received (account, card and phone numbers masked):');
    expect(human.stdout).toContain('"kyc_status":"on_hold"');
    expect(human.stdout).not.toContain('244123456');

    const json = await cli(['--json', 'events', 'show', eventId]);
    expect(json, json.stderr).toMatchObject({ code: 0 });
    const shown = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({ eventId, source: 'kyc', recognized: false, userReference: 'user-h8', appId: stack.appId });
    expect(String(shown.body)).toContain('"user_reference":"user-h8"');
    expect(String(shown.body)).not.toContain('244123456');
  });

  it('makes `kyc status` say it is stored and unrecognized, and point at events show and replay', async () => {
    const human = await cli(['kyc', 'status', 'user-h8', '--app-id', stack.appId]);
    expect(human, human.stderr).toMatchObject({ code: 0 });
    expect(human.stdout).not.toContain('no callback received for this user yet');
    expect(human.stdout).toContain('1 stored callback(s) name user-h8 that payrelay did not recognize');
    expect(human.stdout).toContain(eventId);
    expect(human.stdout).toContain('payrelay events show <event id>');
    expect(human.stdout).toContain('payrelay events replay');

    const json = await cli(['--json', 'kyc', 'status', 'user-h8', '--app-id', stack.appId]);
    expect(json, json.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(json.stdout)).toMatchObject({ local: null, storedCallbacks: [{ eventId, recognized: false, unrecognizedReason: 'unknown kyc_status "on_hold"' }] });

    // A user nothing names still reads as before.
    const nobody = await cli(['kyc', 'status', 'user-nobody', '--app-id', stack.appId]);
    expect(nobody.stdout).toContain('no callback received for this user yet');
  });

  it('exits 4 for an event id that is not stored, and 3 for an empty one', async () => {
    const missing = await cli(['events', 'show', `kyc#${'0'.repeat(64)}`]);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain(`no stored callback kyc#${'0'.repeat(64)}`);
    expect(missing.stdout).toBe('');
    expect((await cli(['events', 'show', 'x'.repeat(5000)])).code).toBe(4);
    expect((await cli(['events', 'show', ' '])).code).toBe(3);
  });
});
