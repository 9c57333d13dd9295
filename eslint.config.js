// ESLint for trtx's TypeScript and JavaScript (`npm run lint`, run in .ci/run):
// the recommended rules plus typescript-eslint's type-aware ones
// (recommendedTypeChecked), on the files tsconfig.json covers. Formatting is
// prettier's (`npm run format`), so no rule here is about layout.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const RUN_VALUES = 'below src/cli/ a run reaches the library as values (src/cli/io.ts); take env, cwd or signal as a parameter';
const PROCESS_IMPORTS = ['process', 'node:process'].map((name) => ({ name, message: RUN_VALUES }));
const OS_FOLDER_IMPORTS = ['os', 'node:os'].map((name) => ({
  name,
  importNames: ['homedir', 'tmpdir'],
  message: "the process's home and temp folders are no run's: read the run's HOME and TMPDIR (util/env.ts homeOf, tempRootOf)",
}));
const RESOLVE_IMPORTS = ['path', 'node:path'].map((name) => ({
  name,
  importNames: ['resolve'],
  message: "resolve() of one path means the process's folder: resolve against the run's with util/env.ts's inFolder(path, cwd)",
}));
const PROCESS_FOLDER_SYNTAX = [
  {
    selector: "CallExpression[callee.property.name='resolve'][callee.object.name=/^(path|posix)$/][arguments.length<2]",
    message: "path.resolve() of one path or none means the process's folder: use util/env.ts's inFolder(path, cwd)",
  },
  {
    selector: "MemberExpression[object.name='os'][property.name=/^(homedir|tmpdir)$/]",
    message: "the process's home and temp folders are no run's: read the run's HOME and TMPDIR (util/env.ts homeOf, tempRootOf)",
  },
];

export default defineConfig(
  {
    // Generated FlatBuffers code and layout tables (npm run gen; gen:check holds them to flatc's output).
    ignores: ['src/generated/**', 'native-runner/**', 'dist/**', '.cache/**', 'fixtures/out/**', 'bench/out/**', 'trtx-demo/**'],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    rules: {
      // flatc's generated builders (src/generated/) are static functions that never use `this`; src/pte/encode.ts passes them as values.
      '@typescript-eslint/unbound-method': ['error', { ignoreStatic: true }],
      // A leading underscore marks a binding kept for its position; a rest sibling drops a field from a copy.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: { allowDefaultProject: ['vitest.config.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    // JavaScript outside tsconfig.json (the build scripts, bin/trtx, these configs): the rules that need no types.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs', 'bin/trtx'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    // The suites read --json documents, SARIF logs, JUnit files and runner
    // reports as parsed JSON and assert on them field by field; their shapes
    // are the schemas' (schemas/*.json, checked by test/cli-json-schemas.test.ts),
    // so the tests do not restate them as types. Only the any-tracking rules
    // are off here; the rest of recommendedTypeChecked holds for test/ too.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
  {
    // One run of the command line is a value (src/cli/io.ts: streams,
    // environment, working folder, cancellation) that src/cli/ passes down,
    // so that runs in one process go at once (the in-process CLI tests). So
    // below src/cli/ nothing reads or changes the process's: no `process`
    // (env, cwd, argv, exitCode, stdout, signal handlers, exit).
    // src/util/os-process.ts alone holds what is the operating-system
    // process's and no run's: its pid (lock owners, temporary names) and
    // signals sent to other processes. Nor what stands for the process's
    // folder, home or temp folder: path.resolve() with fewer than two
    // arguments (or path's `resolve` at all: one argument is the process's
    // folder; util/env.ts's inFolder(path, cwd) alone imports it),
    // os.homedir() and os.tmpdir() (the run's HOME and TMPDIR: util/env.ts).
    // test/lint-rules.test.ts shows each fires.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/util/os-process.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        {
          name: 'process',
          message: 'below src/cli/ a run reaches the library as values (src/cli/io.ts); take env, cwd or signal as a parameter',
        },
      ],
      'no-restricted-imports': ['error', { paths: [...PROCESS_IMPORTS, ...OS_FOLDER_IMPORTS, ...RESOLVE_IMPORTS] }],
      'no-restricted-syntax': ['error', ...PROCESS_FOLDER_SYNTAX],
    },
  },
  {
    // The one place a relative path meets the run's folder (inFolder).
    files: ['src/util/env.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [...PROCESS_IMPORTS, ...OS_FOLDER_IMPORTS] }] },
  },
  {
    // A function reads as one step: past 80 lines (blank lines and comments
    // not counted) it is split into named steps, as the 400-line rule splits
    // a file (docs/architecture.md, "Size and style").
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The scan of a pickle's globals reads up to 16 MiB of a file trtx did
    // not write: linear by construction, with no regular expression (issue
    // 43: one backtracked, 100 KB took 9.7 s). test/export-pickle-globals.test.ts
    // shows it fires.
    files: ['src/export/pickle-globals.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['Literal[regex]', "NewExpression[callee.name='RegExp']", "CallExpression[callee.name='RegExp']"].map((selector) => ({
          selector,
          message: 'no regular expression over pickle bytes: scan them in one pass (src/export/pickle-globals.ts)',
        })),
      ],
    },
  },
);
