// trtx rewrite IN -o OUT [transformations]
// With no transformation flags: the canonical re-encoding of the program.
import type { Command } from 'commander';
import { openPte } from '../pte/open.js';
import { writeFromSource } from '../pte/copy.js';
import { formatIEC } from '../util/size.js';
import { EXIT_OK, usage, type GlobalOptions } from './context.js';
import { action } from './main.js';
import { startProgress } from './progress.js';

interface RewriteOptions extends GlobalOptions {
  output?: string;
}

export function registerRewrite(program: Command): void {
  program
    .command('rewrite')
    .description('rewrite a .pte without re-exporting; with no flags, the canonical re-encoding')
    .argument('<in>', 'the .pte to read')
    .requiredOption('-o, --output <out>', 'where to write (atomically; may equal <in>)')
    .option('--json', 'machine-readable output')
    .addHelpText('after', '\nExamples:\n  trtx rewrite model.pte -o canonical.pte')
    .action(
      action<RewriteOptions>(async (ctx, opts, [input]) => {
        if (!opts.output) throw usage('missing -o OUT');
        const pte = await openPte(input);
        try {
          const progress = startProgress(ctx, `writing ${opts.output}`, { bytes: true });
          const result = await writeFromSource(pte, opts.output, { onProgress: (done, total) => progress.update(done, total) });
          progress.done();
          const summary = { schema: 'trtx.rewrite/1', input, output: result.path, changes: [] as string[], file_size: result.fileSize, segment_alignment: result.alignment };
          if (ctx.json) ctx.emitJson(summary);
          else ctx.print(`wrote ${result.path} (${formatIEC(BigInt(result.fileSize))}): canonical re-encoding, no transformation asked; segments aligned to ${result.alignment}`);
          return EXIT_OK;
        } finally {
          await pte.close();
        }
      }),
    );
}
