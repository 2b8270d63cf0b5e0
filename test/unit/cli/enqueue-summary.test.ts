import { describe, expect, it } from 'vitest';
import { timingLine } from '@cli/commands/payouts-enqueue';
import type { EnqueueReport } from '@cli/enqueue';

const report = (over: Partial<EnqueueReport>): EnqueueReport => ({
  enqueued: [],
  recovered: [],
  skipped: [],
  conflicts: [],
  failed: [],
  handled: 0,
  interrupted: false,
  ...over,
});
const skipped = (n: number) => Array.from({ length: n }, (_, i) => ({ withdrawal_reference: `G-${i + 1}`, state: 'ACCEPTED' as const }));

describe('the last line of the payouts enqueue summary (timingLine)', () => {
  it('gives the check and send times and the rate when rows were sent', () => {
    expect(timingLine(12, report({ enqueued: skipped(12).map((s) => s.withdrawal_reference), handled: 12 }), { checkSeconds: 0.04, sendSeconds: 0.5 })).toBe(
      'checked in 0.0 s, sent in 0.5 s (24 rows/s)',
    );
  });

  it('says that nothing was sent and why, without a send time or a rate, when every row was already recorded (a re-run)', () => {
    expect(timingLine(12, report({ skipped: skipped(12), handled: 12 }), { checkSeconds: 0.04, sendSeconds: 0.15 })).toBe(
      'checked in 0.0 s; nothing sent: all 12 row(s) are already recorded, so an earlier run enqueued them (and no stopped run left any of them unsent); their states are above',
    );
  });

  it('counts each reason when nothing was sent for several', () => {
    const line = timingLine(
      20,
      report({
        skipped: skipped(10),
        conflicts: [{ withdrawal_reference: 'C-1', state: 'ACCEPTED', differ: ['amount'] }],
        failed: [{ withdrawal_reference: 'F-1', reason: 'throttled' }],
        handled: 12,
        interrupted: true,
      }),
      { checkSeconds: 1.26, sendSeconds: 2 },
    );
    expect(line).toBe('checked in 1.3 s; nothing sent: 10 row(s) already recorded, 1 recorded with other data (conflict lines above), 1 refused by the queue, 8 not reached');
    expect(line).not.toMatch(/rows\/s/);
  });
});
