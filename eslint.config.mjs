// ESLint for Herald: the recommended JavaScript rules and typescript-eslint's type-aware set
// (a promise nobody awaits or catches is an error: an attempt's outcome must never be lost).
// Formatting is Prettier's job (.prettierrc.json); `npm run lint` runs both.
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

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
    // The settings page's script runs in the browser, not in Node.
    files: ['src/settings/assets/**/*.js'],
    languageOptions: { globals: { document: 'readonly', window: 'readonly', navigator: 'readonly' } },
  },
);
