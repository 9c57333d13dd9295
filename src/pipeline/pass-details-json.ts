// What the pipeline's pass reports say as data (`rewrite --json`
// passes[]), for the commands that print them: the passes' own zod schemas
// (src/passes/details-json.ts), which nothing outside the pipeline imports
// directly. Only the schema generator loads this at run time.
export { PassJson } from '../passes/details-json.js';
