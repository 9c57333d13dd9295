// trtx fixtures DIR [--only TEXT] [--json]
// Writes the example programs the README and the tests use (the fixture
// catalogue: sound programs laid out as ExecuTorch and Torch-TensorRT lay
// them out, and one broken- program per fault a check must refuse) into DIR.
import type { Command } from 'commander';
import { helpAfter } from '../help.js';
import type { FixturesReport } from '../fixtures-json.js';
import { formatIEC } from '../../util/size.js';
import { EXIT_OK, type GlobalOptions } from '../context.js';
import { action, argAt } from '../action.js';
import type { CliSession } from '../session.js';
import { styler } from '../style.js';

interface FixturesOptions extends GlobalOptions {
  only?: string;
}

export function registerFixtures(program: Command, session: CliSession): void {
  program
    .command('fixtures')
    .description('write the example programs (the fixture catalogue: kv-decode-staged.pte, multi-engine.pte, broken-*.pte, ...) into DIR')
    .argument('<dir>', 'the folder to write them to (made when missing; files of the same names are replaced)')
    .option('--only <text>', 'only the files whose name contains <text>')
    .option('--json', 'machine-readable output (schemas/fixtures.schema.json)')
    .addHelpText(
      'after',
      helpAfter({
        exit: [
          [0, 'written'],
          [2, 'any error: a folder it cannot make or write, an --only that matches nothing'],
        ],
        schema: 'schemas/fixtures.schema.json',
        examples: ['trtx fixtures .', 'trtx fixtures examples --only kv-'],
      }),
    )
    .action(
      action<FixturesOptions>(session, async (ctx, opts, args) => {
        const dir = ctx.at(argAt(args, 0, '<dir>'), 'output');
        const { writeCatalogue } = await import('../../examples/write-catalogue.js');
        const s = styler(ctx);
        const files = await writeCatalogue(dir, { only: opts.only });
        if (ctx.json) {
          const doc: FixturesReport = { schema: 'trtx.fixtures/1', dir, files };
          ctx.emitJson(doc);
          return EXIT_OK;
        }
        const width = Math.max(...files.map((f) => f.file.length));
        for (const f of files) {
          ctx.print(
            `${f.file.padEnd(width)}  ${formatIEC(BigInt(f.bytes)).padStart(10)}  ${f.sound ? s('green', 'sound ') : s('yellow', 'broken')}  ${f.description}`,
          );
        }
        const broken = files.filter((f) => !f.sound).length;
        ctx.print(
          s(
            'bold',
            `wrote ${files.length} program${files.length === 1 ? '' : 's'} to ${dir} (${files.length - broken} sound, ${broken} broken)`,
          ),
        );
        return EXIT_OK;
      }),
    );
}
