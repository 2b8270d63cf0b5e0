import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { payoutSummary } from '@cli/commands/payouts';
import { payoutInState } from '@test/factories/ports';

/** The JSON shapes docs/cli.md gives for scripts, held to what the commands print. */
describe('docs/cli.md: the --json shape of payouts status', () => {
  it('names every field of an element and of its history entries', () => {
    const docs = readFileSync('docs/cli.md', 'utf8').replace(/\s+/g, ' ');
    const shape = /With `--json` the result is an array with one element per payout of that withdrawal_reference.*?`(\[\{.*?\}\]\s*\}\])`/.exec(docs)?.[1];
    expect(shape, 'the sentence giving the shape of `payouts status --json`').toBeDefined();
    const documented = [...(shape as string).matchAll(/"(\w+)"/g)].map((m) => m[1]);

    const reviewed = payoutInState('NEEDS_REVIEW', { platform_merchant_id: 'm1', currency: 'GHS', withdrawal_reference: 'WD-1' });
    const resolved = reviewed.resolveByOperator('FAILED', { by: 'ama', actor: 'ops@host', evidence: 'ticket 7', providerAnswer: 'FAILED' }, new Date());
    const printed = { ...payoutSummary(resolved), history: resolved.record.history };
    // An operator's entry carries every field a history entry can have.
    const entryFields = [...new Set(resolved.record.history.flatMap((entry) => Object.keys(entry)))];
    expect(documented.slice(0, -entryFields.length)).toEqual(Object.keys(printed));
    expect(new Set(documented.slice(-entryFields.length))).toEqual(new Set(entryFields));
  });
});
