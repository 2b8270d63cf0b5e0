import { afterEach, describe, expect, it, vi } from 'vitest';
import { printDeadLetter } from '@cli/commands/dlq';

afterEach(() => vi.restoreAllMocks());

/** What printDeadLetter wrote on stdout, one entry per console.log call. */
function printed(shown: Parameters<typeof printDeadLetter>[0]): string[] {
  const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  printDeadLetter(shown);
  return log.mock.calls.map((call) => String(call[0]));
}

const message = {
  id: 'm-1',
  sentAt: '2026-11-20T10:00:00.000Z',
  receiveCount: 3,
  reason: 'message body is not JSON',
  identity: { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'WD-1' },
  accountMasked: '******3456',
  attributes: { payrelayFirstSentAt: '2026-11-20T10:00:00.000Z' },
};

describe('dlq show for a person (printDeadLetter)', () => {
  it('prints the fields as a table, then the body (as masked by the use case) under a heading of its own, its line breaks kept', () => {
    const body = '{"withdrawal_reference":"WD-1",\n "account_number":"******3456"';
    const lines = printed({ ...message, body });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('first sent');
    expect(lines[0]).toContain('WD-1 (m1, GHS)');
    // The receive count is labelled as counting payrelay's own reads too, not the worker's attempts.
    expect(lines[0]).toContain('receives (our reads too)');
    expect(lines[0]).not.toContain('receiveCount');
    expect(lines.slice(1)).toEqual(['body (account, card and phone numbers masked):', body]);
  });

  it('says on the heading line that a body is empty, rather than printing nothing under it', () => {
    expect(printed({ ...message, body: '' }).slice(1)).toEqual(['body (account, card and phone numbers masked): (empty)']);
  });
});
