import type { Collection, CollectionOrderStatus, CollectionPaymentStatus } from '@shared/domain/collection';
import type { CollectionOrderAnswer, CollectionOrderInput } from '@shared/providers/payout-client';
import type { ProviderCredentials } from './payouts';

/*
 * Ports of the collection use cases (create, the notification projection, status and list).
 * Type-only; shared/adapters/collection-repository.ts and the payout service client implement them.
 */

/** One page of collections, newest first, from an index (never a Scan). */
export interface CollectionListQuery {
  /** Oldest creation time listed. */
  readonly since: Date;
  /** Newest creation time listed (exclusive); defaults to now. */
  readonly until?: Date;
  readonly orderStatus?: CollectionOrderStatus;
  readonly paymentStatus?: CollectionPaymentStatus;
  /** At most this many collections on the page (1 to 1000). */
  readonly limit: number;
  /** The `cursor` of the previous page. */
  readonly cursor?: string;
}

export interface CollectionListPage {
  readonly collections: readonly Collection[];
  /** Present while more pages may follow. */
  readonly cursor?: string;
}

/** The collections table. Every write is conditional on what was read. */
export interface CollectionStore {
  get(partnerOrderId: string): Promise<Collection | undefined>;
  /** Stores a new collection unless one with its order id exists; false when it does. */
  create(collection: Collection): Promise<boolean>;
  /**
   * Writes `next` (version + 1) only if the stored collection still has `previous`'s version.
   * @throws ConcurrentModificationError otherwise
   */
  save(previous: Collection, next: Collection): Promise<Collection>;
  /**
   * Collections created in [since, until), newest first, one page at a time.
   * @throws InvalidListCursorError for a cursor this listing did not hand out
   */
  list(query: CollectionListQuery): Promise<CollectionListPage>;
}

/** The payout service call that creates a collection order; PayoutServiceClient satisfies it. */
export interface CollectionOrderService {
  createCollectionOrder(input: CollectionOrderInput, credentials: ProviderCredentials): Promise<CollectionOrderAnswer>;
}

export type { CollectionOrderAnswer, CollectionOrderInput };
