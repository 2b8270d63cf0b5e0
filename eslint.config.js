import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Import rules: the layer table of docs/architecture.md ("Import rules"), enforced. Each entry
 * forbids every import specifier its regex matches. ESLint keeps only the last matching config's
 * options for a rule, so a folder's list repeats the rules it inherits from a wider folder.
 */
const RULES_DOC = 'see docs/architecture.md, "Import rules"';
const forbid = (regex, message) => ({ regex, message: `${message} (${RULES_DOC})` });

const NOT_DEV_TOOLING = forbid(
  '^@(local|cli|simulator|test|bench)/',
  'runtime code never imports the local stack, the CLI, the simulator, tests or benchmarks',
);
const NO_PARENT_PATHS = forbid('^\\.\\./', 'import across folders with a path alias (@shared/...), not ../');
const NO_ZOD = forbid(
  '^zod($|/)',
  'schemas are valibot schemas (import * as v from @shared/validation/valibot), one library in the project: building zod schemas cost every cold start',
);
const NO_BARE_VALIBOT = forbid(
  '^valibot$',
  'import valibot through @shared/validation/valibot, which installs the messages that never quote a value',
);
const SHARED_OWN = [
  NOT_DEV_TOOLING,
  NO_PARENT_PATHS,
  forbid('^@(functions|infra)/', 'shared/ is imported by handlers and infra, never the other way round'),
];
const SHARED_BASE = [...SHARED_OWN, NO_ZOD, NO_BARE_VALIBOT];
const boundaries = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', 'dist/**', 'coverage/**', '.bench/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // The CLI, the local runner, the simulator command and benchmarks talk to a terminal.
    files: ['cli/**', 'local/**', 'simulator/**', 'bench/**', 'bin/**', 'test/**', 'infra/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The ops console's browser script (served as a static file, no build step).
    files: ['cli/console/static/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { window: 'readonly', document: 'readonly' } },
  },
  {
    // Modules the Lambda bundling puts in place of a CommonJS package's entry (infra/payrelay-function.ts).
    files: ['infra/bundling/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  { files: ['shared/**'], rules: boundaries(...SHARED_BASE) },
  {
    files: ['shared/domain/**'],
    rules: boundaries(
      forbid('^(?!\\./|@shared/domain/|node:crypto$)', 'the domain imports only itself and node:crypto (no AWS SDK, aws-lambda, Powertools or other layer)'),
    ),
  },
  {
    files: ['shared/ports/**'],
    rules: {
      ...boundaries(
        forbid('^(?!\\./|@shared/domain/|@shared/providers/)', 'ports name types of the domain and the provider wire shapes only'),
      ),
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportDeclaration[importKind!="type"]',
          message: `ports are type-only modules: import with \`import type\` (${RULES_DOC})`,
        },
        {
          selector: ':matches(ClassDeclaration, FunctionDeclaration, VariableDeclaration, TSEnumDeclaration)',
          message: `ports are type-only modules: runtime helpers belong in shared/adapters/ or shared/app/ (${RULES_DOC})`,
        },
      ],
    },
  },
  {
    files: ['shared/app/**'],
    rules: boundaries(
      forbid(
        '^(?!\\./|@shared/(domain|ports|messages)/|@shared/signing$|@shared/observability/metric-names$|@shared/providers/provider-errors$)',
        'use cases import the domain, the ports, message schemas, signing, metric names and the provider failure classes; adapters and SDKs are passed in as ports',
      ),
    ),
  },
  {
    files: ['shared/adapters/**'],
    rules: boundaries(...SHARED_BASE, forbid('^@shared/app/', 'adapters implement ports and never import use cases')),
  },
  {
    files: ['functions/**'],
    rules: boundaries(NOT_DEV_TOOLING, NO_PARENT_PATHS, NO_ZOD, NO_BARE_VALIBOT, forbid('^@infra/', 'handlers never import infra')),
  },
  // The one module that imports valibot itself.
  { files: ['shared/validation/valibot.ts'], rules: boundaries(...SHARED_OWN, NO_ZOD) },
  {
    files: ['infra/**'],
    rules: boundaries(
      NOT_DEV_TOOLING,
      forbid('^@functions/', 'infra names handler files by path; it never imports them'),
      forbid(
        '^@shared/(?!config/|observability/metric-names$|validation/valibot$|signing/profile$|providers/status-map$|domain/definite-refusals$)',
        'infra imports only shared/config, the metric names, the schema library and the parsers of the settings it checks at synth (signing profile, status map, definite refusals) from shared/',
      ),
      NO_ZOD,
      NO_BARE_VALIBOT,
    ),
  },
  { files: ['local/**'], rules: boundaries(forbid('^@cli/', 'the local stack never imports the CLI (the CLI reads the local state file)'), NO_ZOD, NO_BARE_VALIBOT) },
  // One schema library in the whole project, with the same words everywhere.
  { files: ['cli/**'], rules: boundaries(NO_ZOD, NO_BARE_VALIBOT) },
  {
    // Provider text reaches the operator's terminal: the CLI prints through cli/output.ts, which shows
    // control characters as visible escapes instead of letting them act (docs/cli.md, "Provider text is printed...").
    files: ['cli/**/*.ts'],
    ignores: ['cli/output.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['log', 'error', 'warn', 'info', 'debug', 'dir', 'table'].map((property) => ({
          object: 'console',
          property,
          message: 'print through cli/output.ts (printLine, printErrorLine, printText, printTable, printRecord), which makes provider text safe for a terminal',
        })),
      ],
    },
  },
  {
    files: ['simulator/**'],
    rules: boundaries(
      forbid('^@(?!shared/domain/|shared/signing$|simulator/)', 'the simulator stands alone: it imports only the domain and signing from shared/'),
    ),
  },
);
