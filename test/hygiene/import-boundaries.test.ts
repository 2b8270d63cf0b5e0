import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

/*
 * The import rules of docs/architecture.md are lint rules (eslint.config.js). These cases lint a
 * probe text as if it were a file in the named folder, with the project's own config, so a rule
 * that is loosened or dropped by accident fails here rather than silently.
 */
let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({ cwd: process.cwd() });
});

async function boundaryMessages(filePath: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

describe('import boundaries', () => {
  it.each([
    ['shared/domain/probe.ts', "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';\nexport const c = DynamoDBClient;\n", 'the domain imports only itself'],
    ['shared/domain/probe.ts', "import type { Context } from 'aws-lambda';\nexport type C = Context;\n", 'the domain imports only itself'],
    ['shared/adapters/probe.ts', "import { createProcessPayout } from '@shared/app/process-payout';\nexport const p = createProcessPayout;\n", 'adapters implement ports'],
    ['shared/app/probe.ts', "import { documentClient } from '@shared/adapters/dynamodb-client';\nexport const d = documentClient;\n", 'use cases import the domain'],
    ['shared/ports/probe.ts', 'export function helper(): number {\n  return 1;\n}\n', 'ports are type-only'],
    ['functions/probe.ts', "import { startSimulator } from '@simulator/index';\nexport const s = startSimulator;\n", 'runtime code never imports'],
    ['infra/probe.ts', "import { logger } from '@shared/observability/logger';\nexport const l = logger;\n", 'infra imports only shared/config'],
    ['infra/probe.ts', "import { digest } from '@shared/signing/sign';\nexport const s = digest;\n", 'infra imports only shared/config'],
    ['local/probe.ts', "import { printTable } from '@cli/output';\nexport const p = printTable;\n", 'the local stack never imports the CLI'],
    ['shared/config/probe.ts', "import * as z from 'zod';\nexport const s = z.string();\n", 'schemas are valibot schemas'],
    ['functions/probe.ts', "import * as z from 'zod/mini';\nexport const s = z.string();\n", 'schemas are valibot schemas'],
    ['shared/messages/probe.ts', "import * as z from 'zod/v4/core';\nexport const s = z;\n", 'schemas are valibot schemas'],
    ['shared/validation/valibot.ts', "import * as z from 'zod/mini';\nexport const s = z.string();\n", 'schemas are valibot schemas'],
    ['shared/config/probe.ts', "import * as v from 'valibot';\nexport const s = v.string();\n", 'import valibot through @shared/validation/valibot'],
    ['cli/console/probe.ts', "import * as z from 'zod';\nexport const s = z.string();\n", 'schemas are valibot schemas'],
    ['infra/probe.ts', "import * as v from 'valibot';\nexport const s = v.string();\n", 'import valibot through @shared/validation/valibot'],
    ['local/probe.ts', "import * as z from 'zod';\nexport const s = z.string();\n", 'schemas are valibot schemas'],
  ])('%s: refuses %j', async (filePath, text, expected) => {
    const messages = await boundaryMessages(filePath, text);
    expect(messages.some((m) => m.includes(expected) && m.includes('docs/architecture.md'))).toBe(true);
  });

  it.each([
    ['shared/domain/probe.ts', "import { createHash } from 'node:crypto';\nimport { maskAccount } from '@shared/domain/account';\nexport const x = [createHash, maskAccount];\n"],
    ['shared/app/probe.ts', "import { Payout } from '@shared/domain/payout';\nimport type { Clock } from '@shared/ports/runtime';\nexport const x = Payout;\nexport type C = Clock;\n"],
    ['shared/adapters/probe.ts', "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';\nimport type { Clock } from '@shared/ports/runtime';\nexport const x = DynamoDBClient;\nexport type C = Clock;\n"],
    ['infra/probe.ts', "import { FUNCTIONS } from '@shared/config/functions';\nexport const f = FUNCTIONS;\n"],
    ['infra/probe.ts', "import * as v from '@shared/validation/valibot';\nexport const s = v.string();\n"],
    ['infra/probe.ts', "import { resolveSigningProfile } from '@shared/signing/profile';\nimport { parseStatusMap } from '@shared/providers/status-map';\nimport { parseDefiniteRefusals } from '@shared/domain/definite-refusals';\nexport const p = [resolveSigningProfile, parseStatusMap, parseDefiniteRefusals];\n"],
    ['shared/config/probe.ts', "import * as v from '@shared/validation/valibot';\nexport const s = v.string();\n"],
    ['shared/messages/probe.ts', "import { toJsonSchema } from '@valibot/to-json-schema';\nexport const s = toJsonSchema;\n"],
  ])('%s: allows what the table allows', async (filePath, text) => {
    expect(await boundaryMessages(filePath, text)).toEqual([]);
  });
});
