import { InvalidArgumentError, type Command, type Option } from 'commander';
import { InvalidPhoneNumberError, normalizePhoneNumber, PHONE_NUMBER_FORM } from '@shared/domain/phone';
import * as v from '@shared/validation/valibot';
import { CliError, EXIT, createOutput, type Output } from './output';
import { applyTargetEnv, resolveTarget, type GlobalOptions, type Target } from './target';

/** What every command action gets: the output mode and the (lazily resolved) target. */
export interface CommandContext {
  readonly out: Output;
  readonly globals: GlobalOptions;
  /** Resolves the target once and applies its env, so adapters imported afterwards use it. */
  target(): Promise<Target>;
}

/** Builds the context from a command's own and global options. */
export function contextOf(command: Command): CommandContext {
  const globals = command.optsWithGlobals<GlobalOptions>();
  let resolved: Promise<Target> | undefined;
  return {
    out: createOutput(globals.json === true),
    globals,
    target() {
      resolved ??= resolveTarget(globals).then((target) => {
        applyTargetEnv(target);
        return target;
      });
      return resolved;
    },
  };
}

/** Appends an "Example:" block to a command's --help. */
export function withExample(command: Command, ...examples: string[]): Command {
  return command.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
}

/** Option parser for a positive whole number; commander prints the error and the CLI exits 2 (usage). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** Option parser for a whole number of 0 or more (`--wait 0`: do not wait); errors as positiveInt. */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number, 0 or more');
  return n;
}

/**
 * An option whose value is one of upper-case `values` (a state, a status), taken in any case:
 * `--state succeeded` is SUCCEEDED. Help still lists the choices; anything else is refused as commander does.
 */
export function upperCaseChoice(option: Option, values: readonly string[]): Option {
  return option.choices(values).argParser((value: string) => {
    const upper = value.trim().toUpperCase();
    if (!values.includes(upper)) throw new InvalidArgumentError(`Allowed choices are ${values.join(', ')}.`);
    return upper;
  });
}

/**
 * A choice of lower-case words given in any case (`--as Failed` is `failed`), as upperCaseChoice does
 * for upper-case ones: the case of a word typed is no reason to refuse it.
 */
export function lowerCaseChoice(option: Option, values: readonly string[]): Option {
  return option.choices(values).argParser((value: string) => {
    const lower = value.trim().toLowerCase();
    if (!values.includes(lower)) throw new InvalidArgumentError(`Allowed choices are ${values.join(', ')}.`);
    return lower;
  });
}

/** Option parser for a country: three letters as the KYC service takes them (`gha` is GHA). */
export function countryCode(value: string): string {
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) throw new InvalidArgumentError('must be a three-letter country code (ISO 3166 alpha-3), e.g. GHA or NGA');
  return code;
}

/**
 * Option parser for `--region`: an AWS region code such as `eu-west-1` or `us-gov-west-1`, taken in
 * any case. The SDK would refuse a malformed one only at the first AWS call, as if AWS were unreachable
 * (exit 5); a typo is a usage error instead. A well-formed region without the stack still asks AWS.
 */
export function awsRegion(value: string): string {
  const region = value.trim().toLowerCase();
  if (!/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/.test(region)) throw new InvalidArgumentError('must be an AWS region code, e.g. eu-west-1 or us-east-1');
  return region;
}

/**
 * Option parser for `kyc order create --redirect`: where the KYC service sends the user after the
 * journey, an absolute URL with a scheme (`https://app.example/kyc/done`, or an app deep link such as
 * `myapp://kyc/done`). Anything that is not a URL at all would only break the user's journey at the end.
 */
export function redirectUrl(value: string): string {
  const url = value.trim();
  if (!URL.canParse(url)) throw new InvalidArgumentError('must be an absolute URL with a scheme, e.g. https://app.example/kyc/done or myapp://kyc/done');
  return url;
}

const EMAIL = v.pipe(v.string(), v.email());

/**
 * Option parser for an e-mail address (`--email`, `--business-email`): the provider sends keys and
 * tokens to it, so text that is not an address at all (`--email ops`) is a usage error here, not a
 * successful call whose mail goes nowhere.
 */
export function emailAddress(value: string): string {
  const email = value.trim();
  if (!v.is(EMAIL, email)) throw new InvalidArgumentError('must be an e-mail address, e.g. ops@acme.example');
  return email;
}

/**
 * Option parser for `kyc order create --phone`: a phone number in international form, returned as
 * the KYC service gets it (`+233 20 000 0000` is `+233200000000`). The use case refuses any other
 * with InvalidPhoneNumberError; refused here too, it is said before any stack or service is asked.
 */
export function phoneNumber(value: string): string {
  try {
    return normalizePhoneNumber(value);
  } catch (error) {
    if (error instanceof InvalidPhoneNumberError) throw new InvalidArgumentError(`must be ${PHONE_NUMBER_FORM}`);
    throw error;
  }
}

/** Option parser for a code or name the provider requires (`--partner-code`, `--name`): not empty. */
export function nonEmptyText(value: string): string {
  const text = value.trim();
  if (text === '') throw new InvalidArgumentError('must not be empty');
  return text;
}

/** `--limit` of a listing: 1 to 1000, one page of the repository; more pages come through `--cursor`. */
export function listLimit(value: string): number {
  const n = positiveInt(value);
  if (n > 1000) throw new InvalidArgumentError('at most 1000 per page; use --cursor for the next page');
  return n;
}

/** Whether a text is a real UTC calendar day written `YYYY-MM-DD` (2026-02-30 is not). */
export function isCalendarDay(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
}

/** Option parser for `--day`: a calendar day as YYYY-MM-DD; commander prints the error and the CLI exits 2 (usage). */
export function calendarDay(value: string): string {
  if (!isCalendarDay(value)) throw new InvalidArgumentError('must be a calendar day as YYYY-MM-DD');
  return value;
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Refuses a --since/--until range with no time in it: `until` before `since`, or (`exclusiveEnd`,
 * where `until` itself is outside the range) not after it.
 */
export function refuseEmptyRange(since: Date | undefined, until: Date | undefined, exclusiveEnd: boolean): void {
  if (since === undefined || until === undefined) return;
  if (exclusiveEnd ? until > since : until >= since) return;
  throw new CliError(`--since/--until: the range is empty: ${until.toISOString()} is ${exclusiveEnd ? 'not after' : 'before'} ${since.toISOString()}`, EXIT.invalidInput);
}

const TIME_FORMS = 'ISO 8601 (2026-11-20T10:00:00Z) or a duration back from now (30m, 6h, 2d)';

/** `value` as a time, `now` minus a duration or an ISO 8601 time; undefined when it is neither. */
function timeOf(value: string, now: Date): Date | undefined {
  const duration = /^(\d+)([mhd])$/.exec(value.trim());
  if (duration) return new Date(now.getTime() - Number(duration[1]) * (UNITS[duration[2] as string] as number));
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * Parses `2026-11-20`, `2026-11-20T10:00:00Z`, or a duration back from now such as `30m`, `6h`, `2d`.
 * @throws CliError (invalid input) for anything else
 */
export function parseSince(value: string, now = new Date()): Date {
  const date = timeOf(value, now);
  if (date === undefined) throw new CliError(`"${value}" is not a time: use ${TIME_FORMS}`, EXIT.invalidInput);
  return date;
}

/**
 * Option parser of every `--since` and `--until`: a time as `parseSince` reads it, refused as every
 * other option value is (exit 3, naming the option). It stays text: the command reads it against its
 * own "now" (`parseSince(value, now)`), so a duration in `--since` and one in `--until` count back from
 * the same moment.
 */
export function timeArg(value: string): string {
  const text = nonEmptyText(value);
  if (timeOf(text, new Date()) === undefined) throw new InvalidArgumentError(`must be ${TIME_FORMS}`);
  return text;
}
