// ESLint for Herald: the recommended JavaScript rules and typescript-eslint's type-aware set
// (a promise nobody awaits or catches is an error: an attempt's outcome must never be lost).
// Formatting is Prettier's job (.prettierrc.json); `npm run lint` runs both.
import eslint from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import { defineConfig } from 'eslint/config';
import { readFileSync } from 'node:fs';
import tseslint from 'typescript-eslint';
import tableOwners from './scripts/eslint-table-owners.js';

/**
 * The module map (architecture.json) as import rules, so a break fails `npm run lint` with the
 * rule's message instead of drifting from a README sentence:
 * - a module imports only the modules its entry lists under `uses` (the list is a DAG, checked by
 *   src/architecture.spec.ts, so no two folders can import each other);
 * - a module's `*.repository.ts` files are its own: another module calls its services;
 * - only src/queue reaches src/queue/sql (every statement on the jobs' tables);
 * - only src/connectors imports a connector (`*.connector.ts`): the others pick one by provider
 *   through ConnectorRegistry, so adding a platform touches no other module;
 * and its "tables" as the rule herald/one-writer-per-table (scripts/eslint-table-owners.js): a
 * statement in a src/ file that writes a table outside the table's owner module is refused.
 */
const map = JSON.parse(readFileSync(`${import.meta.dirname}/architecture.json`, 'utf8'));
const architecture = map.modules;
const folders = Object.keys(architecture).filter((m) => m !== 'app');
const boundaryZones = folders.flatMap((m) => {
  const uses = new Set(architecture[m].uses);
  const others = folders.filter((x) => x !== m);
  return [
    ...others
      .filter((x) => !uses.has(x))
      .map((x) => ({
        target: `./src/${m}`,
        from: `./src/${x}`,
        message: `src/${m} may not import src/${x}: architecture.json lists what each module uses (it is a DAG; the README map is drawn from it).`,
      })),
    {
      target: `./src/${m}`,
      from: others.map((x) => `./src/${x}/**/*.repository.ts`),
      message: `another module's repository: src/${m} calls that module's service instead (one owner per table).`,
    },
    ...(m === 'queue'
      ? []
      : [
          {
            target: `./src/${m}`,
            from: './src/queue/sql',
            message: 'only src/queue runs the statements of src/queue/sql: call JobLifecycle, JobReads or JobStore.',
          },
        ]),
    ...(m === 'connectors'
      ? []
      : [
          {
            target: `./src/${m}`,
            from: './src/connectors/**/*.connector.ts',
            message: `one module per platform: src/${m} may not import a connector (src/connectors/*/*.connector.ts); pick one by provider through ConnectorRegistry (src/connectors/connector.registry.ts) instead, so adding a platform touches no other module.`,
          },
        ]),
    { target: `./src/${m}`, from: './src/*.ts', message: 'the application root (app.module.ts, main.ts) is imported by nobody.' },
  ];
});

export default defineConfig(
  {
    ignores: [
      'dist/**',
      'coverage/**',
      '.data/**',
      'bench/results/**',
      // Type-checked by test/openapi-client.test.ts against types it generates first.
      'test/openapi-client/**',
    ],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: { 'import-x/no-restricted-paths': ['error', { zones: boundaryZones }] },
  },
  {
    // Tests (test/, *.spec.ts) and bench/ set rows up directly; migrations are the schema's.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    plugins: { herald: tableOwners.tableOwnersPlugin(map.tables, import.meta.dirname) },
    rules: { 'herald/one-writer-per-table': 'error' },
  },
  {
    // Tests read HTTP answers, which supertest types as `any`; every answer's shape is checked
    // at run time against the OpenAPI document instead (test/support/openapi.ts). The promise
    // rules stay on: an un-awaited request in a test is a test that cannot fail.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript (configuration files): no type information.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' } },
  },
  {
    // Node scripts of the repository (CommonJS, so the unit tests can require them too), and
    // jest's configuration files and its test sequencer (CommonJS, which jest loads as they are).
    files: ['scripts/**/*.js', 'jest*.config.js', 'test/support/sequencer.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The settings page's script runs in the browser, not in Node.
    files: ['src/settings/assets/**/*.js'],
    languageOptions: { globals: { document: 'readonly', window: 'readonly', navigator: 'readonly' } },
  },
);
