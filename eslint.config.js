// Lint runs as part of `npm test`. Type-aware rules catch floating promises, which in a queue
// system silently lose errors.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['.scratch*/**', '*.tmp.mjs', 'dist/**', 'node_modules/**', 'data/**', 'bench/**', 'test-output/**', 'src/web/dashboard/vendor/**', 'src/passport/kernels/assembly/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], languageOptions: { globals: { ...globals.node } } },
);
