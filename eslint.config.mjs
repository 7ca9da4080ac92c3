// Type-aware lint: the rules that catch real bugs (floating promises, unsafe any) are errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layerZones } from './eslint.layers.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-bench/**',
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      '**/*.cjs',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // The operator console's browser scripts (served inline by src/console/console-page.ts): classic
    // scripts outside every tsconfig, linted without type information against the browser globals they use
    // (listed here: the `globals` package is not a dependency). They share one namespace object,
    // window.AtriumConsole, which console-dom.js creates: reached through `window`, so no global of ours.
    files: ['src/console/assets/**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        sessionStorage: 'readonly',
        fetch: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  ...layerZones,
);
