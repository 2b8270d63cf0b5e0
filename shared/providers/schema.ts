import type * as z from '@shared/validation/zod';
import { ProviderAmbiguousError, type ProviderOperation } from './provider-errors';

/**
 * Checks a 2xx body against the shape an operation needs. A 2xx the client cannot read is not a
 * definite answer, so a mismatch is Ambiguous; the error names fields, never values.
 */
export function expectShape<T>(schema: z.ZodMiniType<T>, body: unknown, operation: ProviderOperation): T {
  const result = schema.safeParse(body);
  if (!result.success) {
    const fields = [...new Set(result.error.issues.map((issue) => issue.path.join('.') || '(root)'))].join(', ');
    throw new ProviderAmbiguousError(operation, `answer does not have the expected shape (${fields}); outcome unknown`);
  }
  return result.data;
}
