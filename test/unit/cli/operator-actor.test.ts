import { hostname, userInfo } from 'node:os';
import { describe, expect, it } from 'vitest';
import { operatorActor, operatorName, reasonWithActor, whoText } from '@cli/operator';
import type { Target } from '@cli/target';

const local: Target = { kind: 'local', label: 'local stack (pid 1)', env: {}, urls: {} };
const ARN = 'arn:aws:sts::123456789012:assumed-role/ops/ama';
const entry = { from: 'NEEDS_REVIEW', to: 'FAILED', at: '2026-01-01T00:00:00.000Z' } as const;

describe('the identity running operator actions (actor)', () => {
  it('is <os user>@<hostname> for the local stack, resolved once per process', async () => {
    const first = operatorActor(local);
    expect(operatorActor({ ...local, label: 'another start' })).toBe(first);
    expect(await first).toBe(`${userInfo().username}@${hostname()}`);
  });

  it('is the name recorded when the operator states none, and gives way to a stated one', async () => {
    expect(await operatorName(local, undefined)).toBe(await operatorActor(local));
    expect(await operatorName(local, '  ')).toBe(await operatorActor(local));
    expect(await operatorName(local, ' alice ')).toBe('alice');
  });
});

describe('how a history entry shows the actor', () => {
  it('puts it beside the name the reason quotes', () => {
    const reason = 'resolved as FAILED by alice: ticket 4711 by alice';
    expect(reasonWithActor({ ...entry, reason, by: 'alice', actor: ARN })).toBe(`resolved as FAILED by alice (as ${ARN}): ticket 4711 by alice`);
    expect(reasonWithActor({ ...entry, to: 'FAILED', from: 'FAILED', reason: 'retried as W-1-R by ama', by: 'ama', actor: 'ama@laptop' })).toBe(
      'retried as W-1-R by ama (as ama@laptop)',
    );
  });

  it('appends it when the reason does not quote the name, and leaves an entry without one as it is', () => {
    expect(reasonWithActor({ ...entry, reason: 'settled by hand', by: 'alice', actor: ARN })).toBe(`settled by hand, by alice (as ${ARN})`);
    expect(reasonWithActor({ ...entry, reason: 'resolved as FAILED by ama: x', by: 'ama' })).toBe('resolved as FAILED by ama: x');
    expect(whoText('alice', ARN)).toBe(`alice (as ${ARN})`);
    expect(whoText('alice', undefined)).toBe('alice');
  });
});
