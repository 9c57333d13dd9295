// npm run zoo: build (or find) trtx's model zoo and say where it is
// (scripts/zoo-build.ts; the models are python-bridge/zoo/models.py).
import { ensureZoo } from './zoo-build.js';

const zoo = await ensureZoo({
  onProgress: (m) => console.error(m),
  onPythonEnv: (p) => console.error(p.message),
});
console.error(
  zoo.built
    ? `built in ${zoo.seconds.build.toFixed(1)} s (packages ${zoo.seconds.packages.toFixed(1)} s; the models ${zoo.manifest.seconds} s)`
    : 'already built',
);
for (const m of zoo.manifest.models)
  console.log(`${m.name.padEnd(16)} ${m.architecture.padEnd(30)} ${String(m.params).padStart(7)} params  ${m.description}`);
console.log(
  `transformers ${zoo.manifest.versions.transformers}, torch ${zoo.manifest.versions.torch}; loads without transformers: ${zoo.lean.length}/${zoo.manifest.models.length}`,
);
console.log(zoo.dir);
