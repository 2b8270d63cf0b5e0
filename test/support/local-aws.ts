import { afterAll, beforeAll } from 'vitest';
import { startLocalAws, type LocalAws, type LocalAwsOptions } from '@local/emulators';

/**
 * Starts local AWS (dynalite, fauxqs, secrets stand-in) for one test file and copies its env into
 * process.env before any handler module is imported. Import handlers with `await import(...)` inside
 * tests or `beforeAll`, after this has run, because handlers read their config at module load.
 */
export function useLocalAws(options: LocalAwsOptions = {}): () => LocalAws {
  let local: LocalAws | undefined;
  beforeAll(async () => {
    local = await startLocalAws(options);
    Object.assign(process.env, local.env);
  });
  afterAll(async () => {
    await local?.stop();
  });
  return () => {
    if (!local) throw new Error('local AWS is not started yet: call the getter inside a test or a hook');
    return local;
  };
}
