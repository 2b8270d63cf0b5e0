import { describe, expect, it } from 'vitest';
import { noticesNaming } from '@shared/app/payout-notices';
import { storedNotifications } from '@test/factories/ports';

/*
 * Which stored notifications count as the provider knowing a payout (money-safety rule 1: any record
 * counts as acknowledging). The events store here holds what the receivers store: authentic bodies,
 * recognized or not, listed under the reference they name.
 */

const identity = { platform_merchant_id: 'MER-1', currency: 'GHS', withdrawal_reference: 'WD-1' };
const createdAt = '2026-11-25T01:00:00.000Z';

describe('noticesNaming', () => {
  it('counts an authentic notification stored as not recognized (an unknown status word) as naming the payout', async () => {
    const events = storedNotifications([
      {
        eventId: 'ev-unrecognized',
        receivedAt: '2026-11-25T01:05:00.000Z',
        withdrawalReference: 'WD-1',
        recognized: false,
        body: { event: 'order.updated', data: { withdrawal_reference: 'WD-1', payment: { status: 'SETTLED_PARTIALLY' } } },
      },
    ]);
    const found = await noticesNaming(events, identity, createdAt);
    expect(found.notices.map((n) => n.eventId)).toEqual(['ev-unrecognized']);
    expect(found.notices[0]?.paymentStatus).toBe('SETTLED_PARTIALLY');
  });

  it('leaves out an unrecognized one about another merchant, as it does a recognized one', async () => {
    const events = storedNotifications([
      {
        eventId: 'ev-other',
        receivedAt: '2026-11-25T01:05:00.000Z',
        withdrawalReference: 'WD-1',
        recognized: false,
        body: { data: { withdrawal_reference: 'WD-1', platform_merchant_id: 'MER-2' } },
      },
    ]);
    expect((await noticesNaming(events, identity, createdAt)).notices).toEqual([]);
  });
});
