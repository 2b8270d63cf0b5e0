import { describe, expect, it } from 'vitest';
import { overviewSnapshots, type OverviewFigures } from '@cli/console/pages/overview';
import { maskAccountsInJsonText } from '@shared/domain/account';

const figures = (n: number): OverviewFigures =>
  ({ byState: [], hourLabels: [], perHour: [], timeToFinal: { labels: [], values: [], sampled: n }, needsReview: n, dlqDepth: 0 }) as OverviewFigures;

describe('overview snapshots', () => {
  it('waits for the first computation, then answers from the snapshot until it is older than the limit', async () => {
    let now = 0;
    let computed = 0;
    const snapshots = overviewSnapshots(async () => figures(++computed), () => new Date(now), 60_000);
    expect((await snapshots.get()).figures.needsReview).toBe(1);
    now = 30_000;
    expect((await snapshots.get()).figures.needsReview).toBe(1);
    expect(computed).toBe(1);
    now = 61_000;
    // Stale: the old snapshot answers now, a new one is computed in the background.
    expect((await snapshots.get()).figures.needsReview).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await snapshots.get()).figures.needsReview).toBe(2);
  });

  it('never runs two computations at a time', async () => {
    let release: () => void = () => {};
    let started = 0;
    const snapshots = overviewSnapshots(
      () => {
        started += 1;
        return new Promise<OverviewFigures>((resolve) => {
          release = () => resolve(figures(started));
        });
      },
      () => new Date(0),
    );
    snapshots.warm();
    const a = snapshots.get();
    const b = snapshots.get();
    release();
    expect((await a).figures).toBe((await b).figures);
    expect(started).toBe(1);
  });

  it('tries again on the next view when a computation failed', async () => {
    let fail = true;
    const snapshots = overviewSnapshots(async () => {
      if (fail) throw new Error('table unreachable');
      return figures(7);
    }, () => new Date(0));
    await expect(snapshots.get()).rejects.toThrow('table unreachable');
    fail = false;
    expect((await snapshots.get()).figures.needsReview).toBe(7);
  });
});

describe('maskAccountsInJsonText', () => {
  it('masks account and phone members and keeps every other byte of the text', () => {
    const body = '{"account_number" : "0123456789","note":"caf\\u00e9 \\/ 100.50","phone":"+233244123456","nested":{"accountNumber":"12"}}';
    expect(maskAccountsInJsonText(body)).toBe(
      '{"account_number" : "******6789","note":"caf\\u00e9 \\/ 100.50","phone":"*********3456","nested":{"accountNumber":"**"}}',
    );
  });
});

describe('payout timeline entry', () => {
  it('shows who acted and their evidence besides the move and reason, escaped', async () => {
    const { timelineEntry } = await import('@cli/console/pages/payouts');
    const entry = { at: '2026-11-23T10:00:00.000Z', from: 'NEEDS_REVIEW', to: 'FAILED', reason: 'resolved by an operator', by: 'ama', evidence: 'ticket <b>4711</b>' };
    const text = String(await timelineEntry(entry as never));
    expect(text).toContain('NEEDS_REVIEW → FAILED');
    expect(text).toContain('<span class="key">by:</span> ama');
    expect(text).toContain('ticket &lt;b&gt;4711&lt;/b&gt;');
    expect(text).not.toContain('<b>');
  });

  it('does not repeat the actor and evidence that the reason already quotes', async () => {
    const { timelineEntry } = await import('@cli/console/pages/payouts');
    const retry = String(await timelineEntry({ at: '2026-11-23T10:00:00.000Z', from: 'FAILED', to: 'FAILED', reason: 'retried as w-2 by ama', by: 'ama' }));
    expect(retry).toContain('retried as w-2 by ama');
    expect(retry).not.toContain('class="key">by:');
    const resolved = {
      at: '2026-11-23T10:00:00.000Z',
      from: 'NEEDS_REVIEW',
      to: 'FAILED',
      reason: 'resolved as FAILED by ama: ticket 4711',
      by: 'ama',
      evidence: 'ticket 4711',
      providerAnswer: 'FAILED',
    };
    const text = String(await timelineEntry(resolved as never));
    expect(text).not.toContain('class="key">by:');
    expect(text).not.toContain('class="key">evidence:');
    expect(text).toContain('<span class="key">providerAnswer:</span> FAILED');
  });

  it('says a forced resolve in plain words, not with the CLI option the stored answer ends with', async () => {
    const { timelineEntry, consoleProviderAnswer } = await import('@cli/console/pages/payouts');
    const stored = 'not found (the provider does not know this reference); overridden with --force';
    const forced = { at: '2026-11-23T10:00:00.000Z', from: 'NEEDS_REVIEW', to: 'FAILED', reason: 'resolved as FAILED by ama: ticket 4711', by: 'ama', evidence: 'ticket 4711', providerAnswer: stored };
    const text = String(await timelineEntry(forced as never));
    expect(text).not.toContain('--force');
    expect(text).toContain('not found (the provider does not know this reference); the operator resolved it against this answer');
    // The result page of the resolve says it with the same words.
    expect(consoleProviderAnswer(stored)).not.toContain('--');
    expect(consoleProviderAnswer('FAILED (failed)')).toBe('FAILED (failed)');
    // A forced retry records the same words on both payouts; the timeline does not call it a resolve.
    const retried = { at: '2026-11-23T11:00:00.000Z', from: 'FAILED', to: 'FAILED', reason: 'retried as W-1-R1 by ama', by: 'ama', evidence: 'ticket 4712', providerAnswer: stored };
    const retriedText = String(await timelineEntry(retried as never));
    expect(retriedText).not.toContain('--force');
    expect(retriedText).not.toContain('resolved');
    expect(retriedText).toContain('a forced retry');
  });

  it('shows the identity that ran the action beside the name, once, as `payouts status` does', async () => {
    const { timelineEntry } = await import('@cli/console/pages/payouts');
    const actor = 'arn:aws:sts::123456789012:assumed-role/ops/ama';
    const resolved = { at: '2026-11-23T10:00:00.000Z', from: 'NEEDS_REVIEW', to: 'FAILED', reason: 'resolved as FAILED by <i>al</i>: ticket 4711', by: '<i>al</i>', actor, evidence: 'ticket 4711' };
    const text = String(await timelineEntry(resolved as never));
    expect(text).toContain(`resolved as FAILED by &lt;i&gt;al&lt;/i&gt; (as ${actor}): ticket 4711`);
    expect(text.split(actor)).toHaveLength(2);
    expect(text).not.toContain('class="key">actor:');
    expect(text).not.toContain('class="key">by:');
  });
});
