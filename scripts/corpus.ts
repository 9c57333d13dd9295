// npm run corpus: build (or find) trtx's real-program corpus and say where it is.
import { ensureRealCorpus } from './corpus/build.js';

const corpus = await ensureRealCorpus({
  onProgress: (m) => console.error(m),
  onPythonEnv: (p) => console.error(p.message),
});
console.error(corpus.built ? `built in ${corpus.manifest.seconds} s` : 'already built');
for (const m of corpus.manifest.models)
  console.log(`${m.name.padEnd(16)} ${Object.keys(m.methods).join(', ').padEnd(18)} ${m.description}`);
console.log(corpus.dir);
