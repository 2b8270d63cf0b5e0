import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
);
