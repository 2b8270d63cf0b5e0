import type { PayoutIdentity } from '@shared/domain/identity';
import type { Payout, PayoutState } from '@shared/domain/payout';
import type { PayoutRepository } from '@shared/ports/payouts';

/**
 * Waits, reading the payout every 100 ms, until a running stack has moved it to `state`: end-to-end
 * tests poll with a bound instead of asserting on time. After `timeoutMs` it throws, naming the
 * state the payout is in.
 */
export async function untilPayoutState(repository: PayoutRepository, identity: PayoutIdentity, state: PayoutState, timeoutMs = 30_000): Promise<Payout> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const payout = await repository.get(identity);
    if (payout?.state === state) return payout;
    if (Date.now() > deadline) throw new Error(`payout ${identity.withdrawal_reference} is ${payout?.state ?? 'not there'} after ${timeoutMs} ms, expected ${state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
