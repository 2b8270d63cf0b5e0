import { expect } from 'vitest';
import { PayrelayConfigError } from '@infra/config';

/** The message of the PayrelayConfigError `run` throws (the test fails if it throws nothing, or anything else). */
export function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(PayrelayConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a PayrelayConfigError');
}
