import { SettingError } from '@shared/domain/errors';
import * as v from '@shared/validation/valibot';

/** Thrown at module load when the environment does not satisfy a handler's schema. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads and validates environment variables once. Call it at module scope in a handler so a
 * missing or malformed variable fails the cold start with its name, not the first request.
 */
export function loadConfig<S extends v.GenericSchema>(schema: S, env: NodeJS.ProcessEnv = process.env): v.InferOutput<S> {
  const result = v.safeParse(schema, env);
  if (!result.success) throw new ConfigError(`invalid configuration: ${v.describeIssues(result.issues)}`);
  return result.output;
}

/*
 * Every optional variable below follows one rule: unset, its documented default applies; set to
 * nothing or to spaces only, it is refused. A blank is what a template, a `VAR=` line or an empty
 * field of a deployment tool leaves behind, and read as a value it would mean something nobody
 * chose: `Number('')` is 0 (a grace of 0 minutes before a payout may be resubmitted), and an empty
 * allow-list or refusal list would mean "none". The message says how to get the default.
 */

/** Whether a variable's text holds anything but spaces. */
const hasText = (text: string): boolean => text.trim() !== '';

/** The words of a blank variable's issue: what leaving it unset gives (the default of docs/architecture.md). */
const blankMessage = (whenUnset: string) => `is empty: unset it to use the default (${whenUnset}), or give a value`;

/** Refuses a blank variable, saying what leaving it unset gives. */
const notBlank = (whenUnset: string) => v.check(hasText, blankMessage(whenUnset));

/** An optional variable read by `read`: unset gives `fallback` (read as if it were written), blank is refused. */
function optionalEnv<TOutput, TIssue extends v.BaseIssue<unknown>>(read: v.BaseSchema<string, TOutput, TIssue>, fallback: string) {
  return v.optional(v.pipe(v.string(), notBlank(fallback), read), fallback);
}

const BOOLEAN_WORDS = ['true', 'false', '1', '0', 'on', 'off'] as const;

/** Boolean env values: `true`/`false`/`1`/`0`/`on`/`off`, anything else is an error. */
export const envBoolean = (defaultValue: boolean) =>
  optionalEnv(
    v.pipe(
      v.picklist(BOOLEAN_WORDS, `must be one of ${BOOLEAN_WORDS.join(', ')}`),
      v.transform((word) => word === 'true' || word === '1' || word === 'on'),
    ),
    String(defaultValue),
  );

/**
 * A number env value, read the way `Number()` reads it (surrounding spaces allowed, `1e3` is 1000);
 * `Infinity` is not a setting anyone means, so it is refused like text.
 */
const envNumber = v.pipe(
  v.string(),
  v.transform((input) => {
    const n = Number(input);
    return Number.isFinite(n) ? n : Number.NaN;
  }),
  v.number('must be a number'),
);

/** A positive integer env value with a default. */
export const envInt = (defaultValue: number) => optionalEnv(v.pipe(envNumber, v.integer(), v.gtValue(0)), String(defaultValue));

/** A whole number env value, 0 allowed, with a default. */
export const envNonNegativeInt = (defaultValue: number) => optionalEnv(v.pipe(envNumber, v.integer(), v.minValue(0)), String(defaultValue));

/** A positive number env value (decimals allowed) with a default. */
export const envPositiveNumber = (defaultValue: number) => optionalEnv(v.pipe(envNumber, v.gtValue(0)), String(defaultValue));

/** A number env value within [min, max] (decimals allowed) with a default. */
export const envNumberBetween = (min: number, max: number, defaultValue: number) =>
  optionalEnv(v.pipe(envNumber, v.minValue(min), v.maxValue(max)), String(defaultValue));

/** A variable that must be set: a name, a URL, an id. Blank is refused like missing. */
export const requiredString = v.pipe(v.string(), v.check(hasText, 'is empty: it is required'));

/** A variable that may be left out (`whenUnset` says what that means), but not set blank. */
export const optionalString = (whenUnset: string) => v.optional(v.pipe(v.string(), notBlank(whenUnset)));

/**
 * What an env setting holds while its variable is unset: a value of its own (no text can be it), so
 * that the setting's parser still runs and gives its default. (valibot skips an optional key without
 * a default.)
 */
const UNSET = Symbol('unset');
const textOrUnset = v.custom<string | typeof UNSET>((input) => typeof input === 'string' || input === UNSET, 'must be text');

/**
 * A setting written as text that a parser reads (SIGNING_PROFILE, PROVIDER_STATUS_MAP,
 * PAYOUT_DEFINITE_REFUSALS, WEBHOOK_ALLOWED_IPS): its value is what `parse` makes of it, of
 * `undefined` when unset (the parser's default, described by `whenUnset`); blank is refused. A
 * parser's SettingError says what is wrong without the variable's name, which `loadConfig` adds.
 */
export function envSetting<T>(parse: (text: string | undefined) => T, whenUnset: string) {
  return v.pipe(
    v.optional(textOrUnset, UNSET),
    v.check((text: string | typeof UNSET) => text === UNSET || hasText(text), blankMessage(whenUnset)),
    v.rawTransform<string | typeof UNSET, T>(({ dataset, addIssue, NEVER }) => {
      try {
        return parse(dataset.value === UNSET ? undefined : dataset.value);
      } catch (error) {
        if (!(error instanceof SettingError)) throw error;
        addIssue({ message: error.message });
        return NEVER;
      }
    }),
  );
}
