import { config } from 'zod/mini';
import { en } from 'zod/locales';

/*
 * The zod every runtime schema is written with (`import * as z from '@shared/validation/zod'`):
 * zod's functional build, `zod/mini`, with the English messages the classic build loads on its own.
 * The classic build gives each schema instance dozens of methods when it is created, which made
 * building the handlers' schemas at module load one of the largest costs of a cold start
 * (docs/performance.md). Lint keeps `zod` itself out of shared/ and functions/, so the classic
 * build cannot come back into a bundle. A namespace re-export, so esbuild still drops what is unused.
 */
config(en());

export * from 'zod/mini';
