import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

/**
 * Awaits a conditional write and says whether its condition held: false when DynamoDB refused it
 * because the item is not as the write expected (it exists already, another writer moved it on),
 * so each caller turns that into its own answer. Every other failure is thrown: a throttled or
 * failed write is never taken for a condition that did not hold.
 */
export async function conditionHeld(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
