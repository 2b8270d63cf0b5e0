import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { FunctionDefinition } from '@shared/config/functions';
import {
  ACCOUNT_KEY_SECRET,
  COLLECTIONS_TABLE,
  EVENTS_TABLE,
  KYC_SECRET,
  KYC_TABLE,
  CHECKS_QUEUE,
  PAYOUTS_QUEUE,
  PAYOUTS_TABLE,
  PROVIDER_SECRET,
  QUARANTINE_TABLE,
  type NamedResource,
  type TableDefinition,
} from '@shared/config/resources';
import type { PayrelayConfig } from './config';

/**
 * The one declarative list of what each payrelay function may touch. Each entry grants an exact
 * set of actions on one table (and named indexes), queue or secret AND sets the env var that names
 * it, so a function never holds a name it cannot use nor a permission it has no name for.
 *
 * To give a function a new permission, add ONE line to FUNCTION_ACCESS below (the action its
 * adapter code sends, e.g. `UpdateItem` for an `UpdateCommand`) and the matching line to the
 * role assertions of test/infra/stacks.test.ts. Never grant a whole family (`read`, `readWrite`):
 * a public receiver with DeleteItem is what this file exists to prevent.
 */

/** DynamoDB item actions, by the SDK command an adapter sends (`QueryCommand` -> `Query`). */
export type DynamoAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query' | 'Scan' | 'BatchGetItem' | 'BatchWriteItem' | 'ConditionCheckItem';

/** When a grant applies; left out, always. */
type Condition = (config: PayrelayConfig) => boolean;

type IndexName<T extends TableDefinition> = T['indexes'][number]['indexName'];

export interface TableGrant {
  readonly kind: 'table';
  /** The table's definition in shared/config/resources.ts. */
  readonly tableId: string;
  /** Env var that receives the table name (the table's definition names it). */
  readonly env: string;
  /** Actions on the table itself (items by key). */
  readonly actions: readonly DynamoAction[];
  /** Actions per named index (Query or Scan); an index left out is not granted. */
  readonly indexes: Readonly<Record<string, readonly DynamoAction[]>>;
  readonly when?: Condition;
}

export interface QueueGrant {
  readonly kind: 'queue';
  /** The queue's id in shared/config/resources.ts (PAYOUTS_QUEUE.id or .deadLetterQueue.id). */
  readonly queueId: string;
  /** Env var that receives the queue URL. */
  readonly env: string;
  /** SQS actions, e.g. `SendMessage`. Consuming goes through the event source, not here. */
  readonly actions: readonly string[];
  readonly when?: Condition;
}

export interface SecretGrant {
  readonly kind: 'secret';
  /** The secret's id in shared/config/resources.ts. */
  readonly secretId: string;
  /** Env var that receives the secret ARN. */
  readonly env: string;
  readonly when?: Condition;
}

export type ResourceGrant = TableGrant | QueueGrant | SecretGrant;

/**
 * What the stage's customer-managed key must allow a role, by what the role does with a store. Each
 * service uses the key with the credentials of its caller, so the role needs these on the key itself.
 */
export const KEY_ACTIONS = {
  /**
   * Any item read or write: DynamoDB decrypts the table's own key with the caller's kms:Decrypt (cached
   * for a few minutes per caller) and never asks KMS for a key per item, so a writer needs no more.
   */
  table: ['kms:Decrypt'],
  /** GetSecretValue: Secrets Manager decrypts the value's data key with the caller's kms:Decrypt. */
  secretRead: ['kms:Decrypt'],
  /** SendMessage: SQS generates a data key, and decrypts it to check it when it reuses a cached one. */
  queueSend: ['kms:Decrypt', 'kms:GenerateDataKey'],
  /** ReceiveMessage: SQS decrypts the message's data key. */
  queueReceive: ['kms:Decrypt'],
} as const;

/** The key actions of a queue grant's SQS actions: only sending and receiving touch a message body. */
function queueKeyActions(actions: readonly string[]): readonly string[] {
  return [...(actions.includes('SendMessage') ? KEY_ACTIONS.queueSend : []), ...(actions.includes('ReceiveMessage') ? KEY_ACTIONS.queueReceive : [])];
}

/** A table grant; index names are checked against the table's definition at compile time. */
export function table<T extends TableDefinition>(
  definition: T,
  actions: readonly DynamoAction[],
  options: { indexes?: Partial<Record<IndexName<T>, readonly DynamoAction[]>>; when?: Condition } = {},
): TableGrant {
  return { kind: 'table', tableId: definition.id, env: definition.env, actions, indexes: (options.indexes ?? {}) as Record<string, readonly DynamoAction[]>, when: options.when };
}

/** A queue grant (`actions` without the `sqs:` prefix) on a queue or a dead-letter queue that has an env var. */
export function queue(definition: NamedResource, actions: readonly string[], options: { when?: Condition } = {}): QueueGrant {
  return { kind: 'queue', queueId: definition.id, env: definition.env, actions, when: options.when };
}

/** Read access (GetSecretValue only) to one secret. */
export function secret(definition: NamedResource, options: { when?: Condition } = {}): SecretGrant {
  return { kind: 'secret', secretId: definition.id, env: definition.env, when: options.when };
}

const kycGatingOn: Condition = (config) => config.settings.kycGating === true;

/**
 * What each function's code performs, read off the adapters on its code path. Keep it exact: the
 * template assertions pin every role to this list, so a new action is added on purpose.
 */
export const FUNCTION_ACCESS: Record<FunctionDefinition['id'], readonly ResourceGrant[]> = {
  'payout-worker': [
    // get (GetItem), createAccepted and save (conditional PutItem).
    table(PAYOUTS_TABLE, ['GetItem', 'PutItem']),
    // KYC gating only: reads the subject and records its confirming pull (conditional PutItem); a
    // subject's stored callbacks not yet applied are applied before a refusal (saveSubject, PutItem).
    table(KYC_TABLE, ['GetItem', 'PutItem'], { when: kycGatingOn }),
    // ... those callbacks: listed by user reference (Query on by-reference), each read (GetItem) and,
    // once applied, recorded (markApplied, conditional UpdateItem). Never the not-yet-applied index.
    table(EVENTS_TABLE, ['GetItem', 'UpdateItem'], { indexes: { 'by-reference': ['Query'] }, when: kycGatingOn }),
    secret(PROVIDER_SECRET),
    // The key of the account fingerprints each new payout stores.
    secret(ACCOUNT_KEY_SECRET),
    secret(KYC_SECRET, { when: kycGatingOn }),
    // Poison and given-up messages go to the DLQ with their reason.
    queue(PAYOUTS_QUEUE.deadLetterQueue, ['SendMessage']),
    // A provider's Retry-After delays a received message's next delivery (the event source consumes it).
    queue(PAYOUTS_QUEUE, ['ChangeMessageVisibility']),
    // The first delayed check of each submitted payout.
    queue(CHECKS_QUEUE, ['SendMessage']),
  ],
  reconciler: [
    // queryDue (Query on the sparse index), queryChanged, countInState and oldestInState (Query on
    // by-state: the reversal watch, the COUNT of the PayoutsAwaitingReview gauge and the oldest
    // review's age beside it), get
    // and the watch's watermark (GetItem), save and the watermark's move (conditional PutItem).
    table(PAYOUTS_TABLE, ['GetItem', 'PutItem'], { indexes: { 'open-by-next-check': ['Query'], 'by-state': ['Query'] } }),
    // Only where "not found" for the whole grace period would decide a payout never acknowledged: the
    // stored order notifications naming it (Query on by-reference), each body read (GetItem). Never written.
    table(EVENTS_TABLE, ['GetItem'], { indexes: { 'by-reference': ['Query'] } }),
    secret(PROVIDER_SECRET),
    // The next delayed check of a payout it leaves open.
    queue(CHECKS_QUEUE, ['SendMessage']),
  ],
  'payout-checker': [
    // get (GetItem), save (conditional PutItem): one payout per check, never the index.
    table(PAYOUTS_TABLE, ['GetItem', 'PutItem']),
    // The reconciler's decision, so the same rare read: the stored order notifications naming a payout
    // where "not found" for the whole grace period would decide it (Query on by-reference, GetItem).
    table(EVENTS_TABLE, ['GetItem'], { indexes: { 'by-reference': ['Query'] } }),
    secret(PROVIDER_SECRET),
    // The next delayed check (consuming the queue goes through the event source).
    queue(CHECKS_QUEUE, ['SendMessage']),
  ],
  // The receivers store and answer; the callback applier does the rest after the 200.
  'kyc-callback': [
    // putOnce (conditional PutItem).
    table(EVENTS_TABLE, ['PutItem']),
    secret(KYC_SECRET),
  ],
  'payout-notification': [
    table(EVENTS_TABLE, ['PutItem']),
    // The quarantine's throttled nudge (markDueNow): Query by withdrawal reference, then a conditional UpdateItem.
    table(PAYOUTS_TABLE, ['UpdateItem'], { indexes: { 'by-withdrawal-reference': ['Query'] } }),
    // quarantine keep: the hour's counter (conditional UpdateItem), then the body (conditional PutItem).
    table(QUARANTINE_TABLE, ['UpdateItem', 'PutItem']),
    secret(PROVIDER_SECRET),
  ],
  'callback-applier': [
    // The sweep: Query the not-yet-applied index, get (GetItem); markApplied (conditional UpdateItem).
    // The stream's records come through the event source, which grants the stream reads.
    table(EVENTS_TABLE, ['GetItem', 'UpdateItem'], { indexes: { 'not-yet-applied': ['Query'] } }),
    // A KYC callback: getSubject (GetItem), saveSubject (conditional PutItem).
    table(KYC_TABLE, ['GetItem', 'PutItem']),
    // An order notification: markDueNow (Query by withdrawal reference, conditional UpdateItem).
    table(PAYOUTS_TABLE, ['UpdateItem'], { indexes: { 'by-withdrawal-reference': ['Query'] } }),
    // An order notification naming a collection: get (GetItem), then save (conditional PutItem on the version).
    table(COLLECTIONS_TABLE, ['GetItem', 'PutItem']),
  ],
  // The scheduled catch-up runs the receiver's path on pulled callbacks (never a dry run, so no GetItem on events).
  'kyc-catch-up': [
    // putOnce (conditional PutItem).
    table(EVENTS_TABLE, ['PutItem']),
    // getSubject (GetItem), saveSubject (conditional PutItem).
    table(KYC_TABLE, ['GetItem', 'PutItem']),
    // app_id for GET /responses.
    secret(KYC_SECRET),
  ],
};

/** The stateful resources a grant can name, by their id in shared/config/resources.ts. */
export interface GrantableResources {
  readonly tables: Readonly<Record<string, ITable>>;
  readonly queues: Readonly<Record<string, IQueue>>;
  readonly secrets: Readonly<Record<string, ISecret>>;
  /** The key of all of them with customer-managed encryption; undefined with AWS-managed keys. */
  readonly dataKey?: IKey;
}

/** Anything that can receive grants and env vars: a Lambda function. */
export interface GrantTarget extends IGrantable {
  addEnvironment(key: string, value: string): unknown;
}

function lookup<T>(kind: string, byId: Readonly<Record<string, T>>, id: string): T {
  const found = byId[id];
  if (!found) throw new Error(`${kind} "${id}" is granted in infra/access.ts but not created by the stateful stack`);
  return found;
}

/**
 * Applies a function's grants: one IAM statement per resource with exactly the listed actions
 * (index ARNs by name, never `index/*`), and the env var naming the resource. Grants whose
 * condition is false are skipped, env var included. With a customer-managed key, one more statement
 * gives the role what its grants need of the key (KEY_ACTIONS), and nothing when they need nothing.
 */
export function applyAccess(fn: GrantTarget, grants: readonly ResourceGrant[], resources: GrantableResources, config: PayrelayConfig): void {
  const keyActions = new Set<string>();
  for (const grant of grants) {
    if (grant.when && !grant.when(config)) continue;
    if (grant.kind === 'table') {
      const target = lookup('table', resources.tables, grant.tableId);
      if (grant.actions.length > 0) {
        Grant.addToPrincipal({ grantee: fn, actions: grant.actions.map((a) => `dynamodb:${a}`), resourceArns: [target.tableArn] });
      }
      for (const [indexName, actions] of Object.entries(grant.indexes)) {
        Grant.addToPrincipal({ grantee: fn, actions: actions.map((a) => `dynamodb:${a}`), resourceArns: [`${target.tableArn}/index/${indexName}`] });
      }
      fn.addEnvironment(grant.env, target.tableName);
      for (const action of KEY_ACTIONS.table) keyActions.add(action);
    } else if (grant.kind === 'queue') {
      const target = lookup('queue', resources.queues, grant.queueId);
      Grant.addToPrincipal({ grantee: fn, actions: grant.actions.map((a) => `sqs:${a}`), resourceArns: [target.queueArn] });
      fn.addEnvironment(grant.env, target.queueUrl);
      for (const action of queueKeyActions(grant.actions)) keyActions.add(action);
    } else {
      const target = lookup('secret', resources.secrets, grant.secretId);
      Grant.addToPrincipal({ grantee: fn, actions: ['secretsmanager:GetSecretValue'], resourceArns: [target.secretArn] });
      fn.addEnvironment(grant.env, target.secretArn);
      for (const action of KEY_ACTIONS.secretRead) keyActions.add(action);
    }
  }
  if (resources.dataKey && keyActions.size > 0) {
    Grant.addToPrincipal({ grantee: fn, actions: [...keyActions].sort(), resourceArns: [resources.dataKey.keyArn] });
  }
}
