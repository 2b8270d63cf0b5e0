import { toJsonSchema } from '@valibot/to-json-schema';
import { payoutRequestSchema } from './payout-request';

/**
 * The payout request message as a JSON Schema (draft 2020-12), generated from the schema the
 * worker and `payouts enqueue` validate with, so a backend in any language can check a message
 * before it enqueues it. docs/payout-request.schema.json is this output; a test keeps them equal.
 * Checks JSON Schema cannot express (the amount's precision for its currency, the account code
 * list, the size of the table key) stay with the worker, which rejects such a message with its reason.
 */
export function payoutRequestJsonSchema(): Record<string, unknown> {
  const generated = toJsonSchema(payoutRequestSchema, { target: 'draft-2020-12', errorMode: 'ignore' });
  const { $schema, ...rest } = generated;
  return {
    $schema,
    title: 'payrelay payout request (version 1)',
    description:
      'One message on the payouts queue. amount is a decimal string in the currency (e.g. "100.50"); the worker also checks its precision for the currency, the account code and the size of the identity, which a schema cannot express.',
    ...rest,
  };
}
