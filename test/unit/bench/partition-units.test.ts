import { describe, expect, it } from 'vitest';
import { EVENTS_TABLE, PAYOUTS_TABLE } from '@shared/config/resources';
import { indexWrites, queriedPartition, readUnits } from '@bench/lib/gsi-writes';

/*
 * The rules the cost part's partition figures rest on: which index partitions an item write lands
 * on (DynamoDB's: a moved entry is a delete on the old key plus a put on the new one), which
 * partition a Query reads, and read units by size and consistency.
 */
describe('bench partition attribution', () => {
  const payout = { pk: 'm|GHS|R-1', withdrawal_reference: 'R-1', openShard: 'OPEN#3', nextCheckAt: '2026-11-23T10:00:00Z' };

  it('puts a new payout on the partition of each index it is in', () => {
    expect(indexWrites(PAYOUTS_TABLE, undefined, payout)).toEqual([
      { index: 'open-by-next-check', partition: 'OPEN#3', units: 1 },
      { index: 'by-withdrawal-reference', partition: 'R-1', units: 1 },
    ]);
  });

  it('counts a moved open-index entry twice on its shard, and nothing where the entry did not change', () => {
    const moved = { ...payout, nextCheckAt: '2026-11-23T10:01:00Z', state: 'SUBMITTED' };
    expect(indexWrites(PAYOUTS_TABLE, payout, moved)).toEqual([
      { index: 'open-by-next-check', partition: 'OPEN#3', units: 1 },
      { index: 'open-by-next-check', partition: 'OPEN#3', units: 1 },
    ]);
    const final = { pk: payout.pk, withdrawal_reference: 'R-1', listShard: 'REJECTED#2', updatedAt: '2026-11-23T10:02:00Z', platform_merchant_id: 'm' };
    expect(indexWrites(PAYOUTS_TABLE, moved, final)).toEqual([
      { index: 'open-by-next-check', partition: 'OPEN#3', units: 1 },
      { index: 'by-state', partition: 'REJECTED#2', units: 1 },
    ]);
    // A success moves to its watch partition: a delete on the open shard and a put on the watch shard.
    const watched = { ...final, listShard: 'SUCCEEDED#2', openShard: 'WATCH#3', nextCheckAt: '2026-11-24T10:02:00Z' };
    expect(indexWrites(PAYOUTS_TABLE, moved, watched)).toEqual([
      { index: 'open-by-next-check', partition: 'OPEN#3', units: 1 },
      { index: 'open-by-next-check', partition: 'WATCH#3', units: 1 },
      { index: 'by-state', partition: 'SUCCEEDED#2', units: 1 },
    ]);
  });

  it('puts only the listing fields of an event on its time-index shard, whatever the body size', () => {
    const event = { pk: 'kyc#abc', receivedShard: '2026-11-23#5', receivedAt: '2026-11-23T10:00:00Z', source: 'kyc', body: 'x'.repeat(300_000) };
    expect(indexWrites(EVENTS_TABLE, undefined, event)).toEqual([{ index: 'by-received-shard', partition: '2026-11-23#5', units: 1 }]);
  });

  it('puts a callback that names a reference on that reference partition too, also without the body', () => {
    const event = { pk: 'kyc#abc', receivedShard: '2026-11-23#5', referenceKey: 'kyc#U-1', receivedAt: '2026-11-23T10:00:00Z', source: 'kyc', body: 'x'.repeat(300_000) };
    expect(indexWrites(EVENTS_TABLE, undefined, event)).toEqual([
      { index: 'by-received-shard', partition: '2026-11-23#5', units: 1 },
      { index: 'by-reference', partition: 'kyc#U-1', units: 1 },
    ]);
  });

  it('reads the partition a Query key condition names, by attribute name or placeholder', () => {
    expect(queriedPartition({ KeyConditionExpression: 'openShard = :s AND nextCheckAt <= :t', ExpressionAttributeValues: { ':s': 'OPEN#2', ':t': 'x' } }, 'openShard')).toBe('OPEN#2');
    expect(
      queriedPartition(
        { KeyConditionExpression: '#key = :key AND receivedAt BETWEEN :since AND :until', ExpressionAttributeNames: { '#key': 'receivedShard' }, ExpressionAttributeValues: { ':key': '2026-11-23#1' } },
        'receivedShard',
      ),
    ).toBe('2026-11-23#1');
    expect(queriedPartition({ KeyConditionExpression: 'other = :v', ExpressionAttributeValues: { ':v': 'a' } }, 'openShard')).toBeUndefined();
  });

  it('charges half a unit per 4 KB for an eventually consistent read, a whole one when consistent', () => {
    expect(readUnits(100, false)).toBe(0.5);
    expect(readUnits(4097, false)).toBe(1);
    expect(readUnits(4097, true)).toBe(2);
    expect(readUnits(0, true)).toBe(1);
  });
});
