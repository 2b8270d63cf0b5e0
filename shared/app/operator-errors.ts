/*
 * Errors of the operator use cases (resolve, retry, DLQ). Each message is a sentence an operator can
 * act on; the CLI and the console map the class to an exit code or an HTTP status in one place each.
 */

/** No payout has this identity (or withdrawal_reference). */
export class PayoutNotFoundError extends Error {
  override name = 'PayoutNotFoundError';
}

/** The operator's input is wrong (empty evidence, a reference that cannot be a key, a wrong account number). */
export class InvalidOperatorInputError extends Error {
  override name = 'InvalidOperatorInputError';
}

/**
 * The action is refused by the payout's state or by what the provider answered (a resolution that
 * contradicts the provider without force, a retry while the first payout could still be delivered).
 */
export class OperatorActionRefusedError extends Error {
  override name = 'OperatorActionRefusedError';
  constructor(
    message: string,
    /** 'state': the payout's state forbids it; 'provider': the provider's answer (or its silence) forbids it. */
    readonly refusedBy: 'state' | 'provider',
    /**
     * Whether the operator may force it on their evidence. The message does not say how: the CLI
     * (--force) and the console (its "force" box) each add their own words.
     */
    readonly forcible = false,
  ) {
    super(message);
  }
}

/** No DLQ message has this id (it may be in flight, or gone). */
export class DeadLetterNotFoundError extends Error {
  override name = 'DeadLetterNotFoundError';
}
