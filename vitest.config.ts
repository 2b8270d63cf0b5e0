import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const dir = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

/** The path aliases mirror tsconfig.json so tests import exactly what the bundles import. */
export default defineConfig({
  resolve: {
    alias: {
      '@shared': dir('./shared'),
      '@functions': dir('./functions'),
      '@infra': dir('./infra'),
      '@simulator': dir('./simulator'),
      '@local': dir('./local'),
      '@cli': dir('./cli'),
      '@test': dir('./test'),
      '@bench': dir('./bench'),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two test files at once: vitest's default on 2 cores is one, and most files spend their time
    // waiting on their own emulators and simulator, not computing. Measured on a 2-core machine:
    // 256 to 285 s of wall time for the suite instead of 421 s, the slowest single test 10 s of its 30.
    maxWorkers: 2,
    env: {
      POWERTOOLS_DEV: 'false',
      // Lambda runs Node 24; the local Node 20 is supported by the locked SDK versions.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_LOG_LEVEL: 'WARN',
      POWERTOOLS_METRICS_DISABLED: 'true',
      POWERTOOLS_TRACE_ENABLED: 'false',
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    },
  },
});
