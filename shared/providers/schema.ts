import * as v from '@shared/validation/valibot';
import { ProviderAmbiguousError, type ProviderOperation } from './provider-errors';

/**
 * Checks a 2xx body against the shape an operation needs. A 2xx the client cannot read is not a
 * definite answer, so a mismatch is Ambiguous; the error names fields, never values.
 */
export function expectShape<T>(schema: v.GenericSchema<unknown, T>, body: unknown, operation: ProviderOperation): T {
  const result = v.safeParse(schema, body);
  if (!result.success) {
    const fields = [...new Set(result.issues.map(v.issuePath))].join(', ');
    throw new ProviderAmbiguousError(operation, `answer does not have the expected shape (${fields}); outcome unknown`);
  }
  return result.output;
}
