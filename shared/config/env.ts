import * as z from '@shared/validation/zod';

/** Thrown at module load when the environment does not satisfy a handler's schema. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads and validates environment variables once. Call it at module scope in a handler so a
 * missing or malformed variable fails the cold start with its name, not the first request.
 */
export function loadConfig<S extends z.ZodMiniType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  return result.data;
}

/** Boolean env values: `true`/`false`/`1`/`0`/`on`/`off`, anything else is an error. */
export const envBoolean = (defaultValue: boolean) =>
  z.pipe(
    z.optional(z.enum(['true', 'false', '1', '0', 'on', 'off'])),
    z.transform((v) => (v === undefined ? defaultValue : v === 'true' || v === '1' || v === 'on')),
  );

/** A positive integer env value with a default. */
export const envInt = (defaultValue: number) =>
  z.pipe(
    z.optional(z.coerce.number().check(z.int(), z.positive())),
    z.transform((v) => v ?? defaultValue),
  );

/** A positive number env value (decimals allowed) with a default. */
export const envPositiveNumber = (defaultValue: number) =>
  z.pipe(
    z.optional(z.coerce.number().check(z.positive())),
    z.transform((v) => v ?? defaultValue),
  );

export const requiredString = z.string().check(z.minLength(1, 'is required'));

/** A variable that may be left out, but not set empty. */
export const optionalNonEmptyString = z.optional(requiredString);
