import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLocalState } from '@local/state';
import { createKycRepository, type KycRepository } from '@shared/adapters/kyc-repository';
import { dedupeKey } from '@shared/domain/callbacks';
import type { KycSubject } from '@shared/domain/kyc-subject';
import { startRecordingServer, type RecordingServer } from '@test/support/http-test-servers';
import { startReceiverStack, type ReceiverStack } from '@test/integration/webhooks/receiver-stack';
import { runPayrelay, type CliRun } from '@test/support/payrelay-cli';

/*
 * `payrelay kyc catch-up` as an operator runs it (bin/payrelay.js), against a local stack recorded
 * in a state file as `npm start` records it: the simulator drops KYC deliveries, the receivers
 * (behind the local gateway) store what does arrive, and the catch-up recovers the rest.
 */
const stateFile = join(mkdtempSync(join(tmpdir(), 'payrelay-catch-up-')), 'state.json');
let stack: ReceiverStack;
let subjects: KycRepository;
let garbage: RecordingServer;

const cli = (args: string[]): Promise<CliRun> => runPayrelay(stateFile, args);

beforeAll(async () => {
  stack = await startReceiverStack({ stage: 'e2ecatchup', simulator: { seed: 19 } });
  subjects = createKycRepository({ tableName: stack.local.names.kycTable, client: stack.doc });
  writeLocalState(
    {
      pid: process.pid,
      startedAt: new Date().toISOString(),
      stage: 'e2ecatchup',
      urls: { gateway: stack.gateway.url, kycCallback: '', payoutNotification: '', payoutApi: stack.sim.payoutBaseUrl, kycApi: stack.sim.kycBaseUrl },
      env: { ...stack.local.env, KYC_API_BASE_URL: stack.sim.kycBaseUrl },
    },
    stateFile,
  );
  garbage = await startRecordingServer(() => ({ status: 200, body: { message: 'ok', count: 3 } }));
});

afterAll(async () => {
  await garbage?.close();
  await stack?.stop();
});

/** A subject once every callback stored so far is applied (the callback applier runs after each 200). */
const subject = async (userReference: string) => {
  await stack.applyNow();
  return subjects.getSubject({ appId: stack.appId, userReference });
};
const storedEvents = () => stack.scan(stack.local.names.eventsTable);
/** What a subject says about the user, without bookkeeping and the ids of the events it came from. */
const state = (s: KycSubject | undefined) =>
  s && { phase: s.phase, decision: s.decision, event: s.event, profile: s.profile, decisionChanged: s.decisionChanged, finalDecisionsSeen: s.finalDecisionsSeen };

describe('payrelay kyc catch-up on the local stack', () => {
  it('recovers dropped deliveries once: every user ends where full delivery would have put them; a second run recovers nothing', async () => {
    await stack.sim.admin.advanceKyc({ order_id: await stack.order('e2e-delivered'), action: 'finish', decision: 'approved' });
    stack.sim.admin.setFaults('kycCallback', { dropRate: 1 });
    await stack.sim.admin.advanceKyc({ order_id: await stack.order('e2e-missed'), action: 'finish', decision: 'approved' });
    stack.sim.admin.setFaults('kycCallback', { dropRate: 0.5 });
    await stack.sim.admin.advanceKyc({ order_id: await stack.order('e2e-rejected'), action: 'finish', decision: 'rejected' });
    stack.sim.admin.clearFaults();
    const dropped = stack.sim.admin.callbacks().filter((d) => d.dropped);
    expect(dropped.length).toBeGreaterThanOrEqual(6);
    expect(await subject('e2e-missed')).toBeUndefined();
    const storedBefore = await storedEvents();

    const dry = await cli(['kyc', 'catch-up', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('Dry run: nothing was stored or applied.');
    expect(dry.stdout).toMatch(/would recover/);
    expect(dry.stdout.includes(String.fromCharCode(27))).toBe(false);
    expect(await storedEvents()).toHaveLength(storedBefore.length);

    const first = await cli(['--json', 'kyc', 'catch-up']);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ appId: stack.appId, seen: 15, recovered: dropped.length, alreadyStored: 15 - dropped.length, failed: 0 });
    expect(first.stderr).toContain(`note: ${dropped.length} callback(s) had not been delivered`);

    expect(state(await subject('e2e-missed'))).toEqual(state(await subject('e2e-delivered')));
    expect(await subject('e2e-missed')).toMatchObject({ phase: 'completed', decision: 'approved', profile: { first_name: 'Ama', last_name: 'Mensah' } });
    expect(await subject('e2e-rejected')).toMatchObject({ phase: 'completed', decision: 'rejected', event: 'applicantReviewed' });

    const events = await storedEvents();
    expect(events).toHaveLength(storedBefore.length + dropped.length);
    for (const delivery of dropped) expect(events.filter((e) => e.pk === dedupeKey('kyc', delivery.body))).toMatchObject([{ via: 'catch-up' }]);

    const second = await cli(['--json', 'kyc', 'catch-up', '--since', '1h']);
    expect(second.code).toBe(0);
    expect(second.stderr).toBe('');
    expect(JSON.parse(second.stdout)).toMatchObject({ seen: 15, beforeSince: 0, alreadyStored: 15, recovered: 0, unrecognized: 0, subjects: [] });
    expect(await storedEvents()).toHaveLength(events.length);
  });

  it('kyc status shows the subject here and the KYC service\'s own status and order status', async () => {
    await stack.sim.admin.advanceKyc({ order_id: await stack.order('e2e-status'), action: 'finish', decision: 'approved' });
    await subject('e2e-status');
    const out = await cli(['kyc', 'status', 'e2e-status', '--app-id', stack.appId]);
    expect(out.code).toBe(0);
    const provider = out.stdout.slice(out.stdout.indexOf('At the KYC service'));
    expect(provider).toMatch(/│ status +│ approved +│/);
    expect(provider).toMatch(/│ order_status +│ completed +│/);
  });

  it('refuses a garbage /responses answer with one clear line and exit 5, storing nothing', async () => {
    const before = await storedEvents();
    const out = await cli(['kyc', 'catch-up', '--kyc-url', garbage.url]);
    expect(out.code).toBe(5);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim()).toBe(
      "payrelay: the KYC service's /responses answer cannot be read, so nothing was stored: the answer is an object with fields message, count: " +
        'expected an array of callback payloads, or an object holding one in data, responses, docs',
    );
    expect(garbage.requests.at(-1)?.query).toEqual({ app_id: stack.appId });
    expect(await storedEvents()).toEqual(before);
  });
});
