import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CommandContext } from '@cli/context';
import { heldNextStep, printRedriveReport } from '@cli/commands/dlq';
import { CliError, createOutput } from '@cli/output';
import type { HeldDeadLetter, RedriveReport } from '@shared/app/dead-letters';

afterEach(() => vi.restoreAllMocks());

const identity = { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'WD-1' };
const reviewed: HeldDeadLetter = { id: 'msg-1', identity, state: 'NEEDS_REVIEW', payoutReason: 'not processed within 60 minutes; nothing was paid' };
const report = (held: HeldDeadLetter[]): RedriveReport => ({ presentAtStart: held.length, moved: 0, failedAgain: 0, skipped: 0, held, notLookedUp: [], runId: 'run-1' });
const context = (json: boolean): CommandContext => ({ out: createOutput(json), globals: {}, target: () => Promise.reject(new Error('no target in this test')) }) as unknown as CommandContext;

describe('a redrive that held messages whose payout is final or in review', () => {
  it('names the next step for each state: resolve (no --force for "nothing was paid"), retry, then dlq delete', () => {
    const step = heldNextStep(reviewed);
    expect(step).toMatch(/^NEEDS_REVIEW: a redrive will not pay it: resolve it \(`payrelay payouts resolve WD-1 --merchant m1 --currency GHS --as failed /);
    expect(step).toContain('then `payrelay payouts retry WD-1 --merchant m1 --currency GHS --new-reference <new reference>`');
    expect(step).toContain('then `payrelay dlq delete msg-1 --reason');
    expect(step).not.toContain('--force');
    expect(heldNextStep({ ...reviewed, payoutReason: 'still PENDING after 1440 minutes' })).toContain('once you know what happened');
    expect(heldNextStep({ ...reviewed, state: 'SUCCEEDED' })).toMatch(/^SUCCEEDED: already paid, nothing to redrive: then `payrelay dlq delete msg-1/);
    expect(heldNextStep({ ...reviewed, state: 'FAILED' })).toContain('payouts retry WD-1');
  });

  it('prints them apart from the moved ones with the next step, and exits 1: the DLQ is not empty and the payout needs a person', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    let thrown: unknown;
    try {
      printRedriveReport(context(false), report([reviewed]));
    } catch (error) {
      thrown = error;
    }
    const out = log.mock.calls.map((call) => String(call[0])).join('\n');
    expect(out).toContain('held (payout final or in review)');
    expect(out).toContain('Held in the DLQ, not moved');
    expect(out).toContain('NEEDS_REVIEW: a redrive will not pay it');
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).message).toContain('1 message(s) held in the DLQ');
  });

  it('gives each held message its next step in --json', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(() => printRedriveReport(context(true), report([reviewed]))).toThrow(CliError);
    const data = JSON.parse(write.mock.calls.map((call) => String(call[0])).join('')) as { held: Array<{ id: string; state: string; next: string }> };
    expect(data.held).toEqual([expect.objectContaining({ id: 'msg-1', state: 'NEEDS_REVIEW', next: heldNextStep(reviewed) })]);
  });
});

describe('a redrive that could not look up the payout of some messages', () => {
  const unread: RedriveReport = { ...report([]), presentAtStart: 1, notLookedUp: [{ id: 'msg-2', identity, error: 'ProvisionedThroughputExceededException' }] };

  it('prints them as not looked up, left in the DLQ, and exits 1', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    let thrown: unknown;
    try {
      printRedriveReport(context(false), unread);
    } catch (error) {
      thrown = error;
    }
    const out = log.mock.calls.map((call) => String(call[0])).join('\n');
    expect(out).toContain('not looked up (payout read failed)');
    expect(out).toContain('could not be read');
    expect(out).toContain('msg-2');
    expect(out).toContain('ProvisionedThroughputExceededException');
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).message).toContain('1 message(s) left in the DLQ: the payout each names could not be read');
  });

  it('carries them in --json', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    expect(() => printRedriveReport(context(true), unread)).toThrow(CliError);
    const data = JSON.parse(write.mock.calls.map((call) => String(call[0])).join('')) as { notLookedUp: unknown };
    expect(data.notLookedUp).toEqual([{ id: 'msg-2', identity, error: 'ProvisionedThroughputExceededException' }]);
  });
});
