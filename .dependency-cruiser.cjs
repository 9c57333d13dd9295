// trtx's import rules, checked by dependency-cruiser (`npm run deps`, run in
// .ci/run). docs/architecture.md explains the layers; LAYERS below is the
// same table as code: each folder of src/ and the folders it may import.
// A folder imports itself freely; anything not listed is refused. A new
// folder gets a row here and a line in docs/architecture.md.

const LAYERS = {
  // Below everything: every code trtx reports (src/codes/); every layer may import it.
  codes: [],
  // Foundation: nothing of trtx but the codes.
  util: ['codes'],
  generated: [],
  // The program, its container and the TensorRT delegate's formats.
  pte: ['util', 'generated', 'codes'],
  tensorrt: ['pte', 'util', 'generated', 'codes'],
  // Program analysis shared by the checks and the passes.
  graph: ['pte', 'tensorrt', 'util', 'codes'],
  // Stages over a program: none imports another.
  checks: ['graph', 'pte', 'tensorrt', 'util', 'codes'],
  passes: ['graph', 'pte', 'tensorrt', 'util', 'codes'],
  examples: ['pte', 'tensorrt', 'util', 'generated', 'codes'],
  // Views of programs: what inspect and diff say (inspect also the memory-plan model), and the HTML pictures of them.
  inspect: ['graph', 'pte', 'tensorrt', 'util', 'codes'],
  diff: ['graph', 'pte', 'tensorrt', 'util', 'codes'],
  html: ['inspect', 'diff', 'graph', 'pte', 'tensorrt', 'util', 'codes'],
  // The one rewrite pipeline: open -> passes -> check -> write.
  pipeline: ['checks', 'passes', 'graph', 'pte', 'tensorrt', 'util', 'codes'],
  // The world outside: the Python bridge, its environment, the native runner.
  bridge: ['util', 'codes'],
  pyenv: ['bridge', 'util', 'codes'],
  sdk: ['util', 'codes'],
  // runner also pyenv: the managed environment's torch is where the runner's ATen kernels come from (src/runner/libtorch.ts).
  runner: ['sdk', 'pyenv', 'util', 'codes'],
  // Eager PyTorch's recorded outputs (the reference outputs file) and the comparison with them.
  reference: ['util', 'codes'],
  // The jobs the commands run.
  export: ['pipeline', 'reference', 'bridge', 'pyenv', 'checks', 'pte', 'tensorrt', 'util', 'codes'],
  verify: ['pipeline', 'reference', 'runner', 'checks', 'graph', 'pte', 'tensorrt', 'util', 'codes'],
  demo: [
    'export',
    'verify',
    'reference',
    'pipeline',
    'examples',
    'bridge',
    'pyenv',
    'runner',
    'checks',
    'graph',
    'pte',
    'tensorrt',
    'util',
    'codes',
  ],
  // CI formats of findings and verify results (SARIF, GitHub annotations, JUnit).
  report: ['checks', 'verify', 'reference', 'util', 'codes'],
  // cli/ may import every folder; nothing imports it (rules below).
};

const layerRules = Object.entries(LAYERS).map(([folder, allowed]) => ({
  name: `layer-${folder}`,
  comment: `src/${folder}/ imports only ${allowed.length ? allowed.map((a) => `src/${a}/`).join(', ') : 'itself'} (docs/architecture.md)`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: `^src/(${[folder, ...allowed].join('|')})/` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'no import cycle anywhere in src/, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-not-tests',
      comment: 'shipped code never imports the test programs (fixtures/), the tests, the benchmarks or the scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(fixtures|test|bench|scripts)/' },
    },
    {
      name: 'library-not-cli',
      comment: 'the library below the CLI never imports it (it never prints or exits either)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'commands-independent',
      comment: 'a command imports no other command and not cli/main.ts (which imports them all); what two commands share lives in src/cli/',
      severity: 'error',
      from: { path: '^src/cli/commands/' },
      to: { path: '^src/cli/(commands/|main\\.ts$)' },
    },
    {
      name: 'cli-helpers-below-commands',
      comment: 'the shared CLI modules (context, action, rendering) import no command',
      severity: 'error',
      from: { path: '^src/cli/[^/]+$', pathNot: '^src/cli/main\\.ts$' },
      to: { path: '^src/cli/(commands/|main\\.ts$)' },
    },
    {
      name: 'checks-not-passes',
      comment: 'the checks judge a program, the passes change it: neither imports the other (what both read is src/graph/)',
      severity: 'error',
      from: { path: '^src/checks/' },
      to: { path: '^src/passes/' },
    },
    {
      name: 'passes-not-checks',
      comment: 'the passes never import the checks; the pipeline runs both',
      severity: 'error',
      from: { path: '^src/passes/' },
      to: { path: '^src/checks/' },
    },
    {
      name: 'passes-only-in-the-pipeline',
      comment: 'every rewrite runs through src/pipeline/ (plan -> passes -> check -> write): nothing else imports a pass',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(passes|pipeline)/' },
      to: { path: '^src/passes/' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are arrows too: a cycle through types is still a cycle.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'] },
  },
};
