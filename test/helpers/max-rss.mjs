// Preloaded (node --import) into a trtx child process by child-cli.ts: on
// exit, writes the process's peak resident set size in KiB
// (process.resourceUsage().maxRSS, getrusage's ru_maxrss) to the file named
// by TRTX_TEST_MAX_RSS_FILE, so a test can bound the memory a command used.
import { writeFileSync } from 'node:fs';

const out = process.env.TRTX_TEST_MAX_RSS_FILE;
if (out) {
  process.on('exit', () => {
    writeFileSync(out, String(process.resourceUsage().maxRSS));
  });
}
