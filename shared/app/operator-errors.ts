/*
 * Errors of the operator use cases (resolve, retry, DLQ). Each message is a sentence an operator can
 * act on; the CLI and the console map the class to an exit code or an HTTP status in one place each.
 */

/** No payout has this identity (or withdrawal_reference). */
export class PayoutNotFoundError extends Error {
  override name = 'PayoutNotFoundError';
}

/**
 * An input of an operator's request that an error is about. Messages name it in plain words ("the
 * new reference"); each caller points to where it is given in its own way: the CLI by its option
 * (`--new-reference`), the console by the words of its form.
 */
export type OperatorInput = 'newReference' | 'accountNumber';

/** The operator's input is wrong (empty evidence, a reference that cannot be a key, a wrong account number). */
export class InvalidOperatorInputError extends Error {
  override name = 'InvalidOperatorInputError';
  constructor(
    message: string,
    /** The input the message is about, when it is one the caller names its own way. */
    readonly input?: OperatorInput,
  ) {
    super(message);
  }
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
    /** The input the refusal is about, when another value of it would be accepted (a new reference already taken). */
    readonly input?: OperatorInput,
  ) {
    super(message);
  }
}

/** No DLQ message has this id (it may be in flight, or gone). */
export class DeadLetterNotFoundError extends Error {
  override name = 'DeadLetterNotFoundError';
}
