import { afterEach, describe, expect, it, vi } from 'vitest';
import { printUnrecognized } from '@cli/commands/events';
import { UNRECOGNIZED_NAMED, type UnrecognizedEvent } from '@shared/app/replay-events';

afterEach(() => vi.restoreAllMocks());

const event = (n: number): UnrecognizedEvent => ({ eventId: `2026-11-21.ev${n}`, source: 'kyc', receivedAt: '2026-11-21T00:00:00.000Z', reason: `unknown kyc_status "on_hold_${n}"` });

function printed(total: number, named: UnrecognizedEvent[]): string {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  printUnrecognized(total, named);
  return log.mock.calls.map((call) => String(call[0])).join('\n');
}

describe('events replay names its unrecognized events (printUnrecognized)', () => {
  it('prints nothing when every event was recognized', () => {
    expect(printed(0, [])).toBe('');
  });

  it('prints each event id with why it was not recognized', () => {
    const out = printed(1, [event(1)]);
    expect(out).toContain('2026-11-21.ev1');
    expect(out).toContain('unknown kyc_status "on_hold_1"');
    expect(out).toContain('why not recognized');
  });

  it('names the first ones the replay kept and counts the rest', () => {
    const named = Array.from({ length: UNRECOGNIZED_NAMED }, (_, i) => event(i));
    const out = printed(25, named);
    expect(out).toContain(`the first ${UNRECOGNIZED_NAMED} of 25`);
    expect(out).toContain(`and ${25 - UNRECOGNIZED_NAMED} more not named here`);
  });
});
