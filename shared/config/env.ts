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

const BOOLEAN_WORDS = ['true', 'false', '1', '0', 'on', 'off'] as const;

/** Boolean env values: `true`/`false`/`1`/`0`/`on`/`off`, anything else is an error. */
export const envBoolean = (defaultValue: boolean) =>
  v.optional(
    v.pipe(
      v.picklist(BOOLEAN_WORDS, `must be one of ${BOOLEAN_WORDS.join(', ')}`),
      v.transform((word) => word === 'true' || word === '1' || word === 'on'),
    ),
    defaultValue ? 'true' : 'false',
  );

/**
 * A number env value, read the way `Number()` reads it (surrounding spaces allowed, `1e3` is 1000);
 * `Infinity` is not a setting anyone means, so it is refused like text.
 */
const envNumber = v.pipe(
  v.unknown(),
  v.transform((input) => {
    const n = Number(input);
    return Number.isFinite(n) ? n : Number.NaN;
  }),
  v.number('must be a number'),
);

/** A positive integer env value with a default. */
export const envInt = (defaultValue: number) =>
  v.optional(v.pipe(envNumber, v.integer(), v.gtValue(0)), defaultValue);

/** A whole number env value, 0 allowed, with a default. */
export const envNonNegativeInt = (defaultValue: number) =>
  v.optional(v.pipe(envNumber, v.integer(), v.minValue(0)), defaultValue);

/** A positive number env value (decimals allowed) with a default. */
export const envPositiveNumber = (defaultValue: number) =>
  v.optional(v.pipe(envNumber, v.gtValue(0)), defaultValue);

/** A number env value within [min, max] (decimals allowed) with a default. */
export const envNumberBetween = (min: number, max: number, defaultValue: number) =>
  v.optional(v.pipe(envNumber, v.minValue(min), v.maxValue(max)), defaultValue);

export const requiredString = v.pipe(v.string(), v.minLength(1, 'is required'));

/** A variable that may be left out, but not set empty. */
export const optionalNonEmptyString = v.optional(requiredString);
