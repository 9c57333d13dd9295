// `trtx verify --format junit`: the verify checks as a JUnit XML report, the
// format CI services publish as test results. One test case per verify
// check; a failed check is a <failure> whose message and body carry what
// differed (for a comparison: the method, step, output or cache, and the two
// digests). The document is valid against both schemas CI services are
// written to: the Apache Ant JUnit schema (strict: every suite has
// properties, system-out and system-err, every case a classname and a time)
// and the Jenkins JUnit schema (test/report-junit.test.ts validates both).

import type { VerifyResult } from '../verify/verify.js';
import { TRTX_VERSION } from '../util/version.js';

export interface JunitContext {
  /** When the verify run started. */
  started: Date;
  /** Wall seconds it took. */
  seconds: number;
  hostname: string;
}

/** XML 1.0 cannot carry most control characters even as references: they are shown escaped. */
function xml(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      // eslint-disable-next-line no-control-regex -- characters XML 1.0 cannot hold are written as escapes
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  );
}

/** Ant's ISO8601_DATETIME_PATTERN: seconds, no fraction, no zone (written in UTC). */
const timestamp = (d: Date) => d.toISOString().slice(0, 19);

const fileStem = (file: string) => (file.split(/[\\/]/).pop() ?? file).replace(/\.pte$/, '') || 'program';

export function toJunit(r: VerifyResult, ctx: JunitContext): string {
  // A program the check refused ran nowhere: its one case is the check.
  const errors = r.check.diagnostics.filter((d) => d.severity === 'error');
  const assertions = r.check.refused
    ? [
        {
          name: `the program passes trtx check (runtime rules ${r.runtime.delegate}, ${r.runtime.memory})`,
          ok: false,
          detail: errors.map((d) => `${d.file}: ${d.code}: ${d.location}: ${d.message}`).join('\n'),
        },
      ]
    : r.assertions;
  const failures = assertions.filter((a) => !a.ok).length;
  const where = r.device === null ? 'nowhere (the check refused it)' : r.device.kind === 'cuda' ? `GPU ${r.device.name}` : 'CPU';
  const classname = `trtx.verify.${fileStem(r.file).replace(/\s+/g, '_')}`;
  const props: [string, string][] = [
    ['file', r.file],
    ['mode', r.mode],
    ['device', where],
    ['steps', String(r.steps)],
    ['methods', r.methods.join(', ')],
    ['caches', r.caches.join(', ') || '-'],
    ['trtx', TRTX_VERSION],
  ];
  const cases = assertions.map((a) => {
    const open = `    <testcase name="${xml(a.name)}" classname="${xml(classname)}" time="0"`;
    if (a.ok) return `${open}/>`;
    const body = [`${a.name}: FAILED`, a.detail || '(no detail)', `file ${r.file}, ${r.mode}, ${r.steps} steps on ${where}`].join('\n');
    return `${open}>\n      <failure message="${xml(a.detail || a.name)}" type="trtx.verify">${xml(body)}</failure>\n    </testcase>`;
  });
  const out: string[] = [];
  for (const run of r.runs) {
    const st = run.staging.map((m) => `${m.method} host->device ${m.h2d_bytes} B, device->host ${m.d2h_bytes} B`).join('; ');
    out.push(
      `${run.variant} run${run.caller_stream ? ' (caller stream)' : ''}${run.fresh_state ? ' (fresh caches)' : ''}: exit ${run.exit_code}; per step ${st || '-'}`,
    );
  }
  for (const b of r.budgets) out.push(`budget ${b.method} delegate ${b.delegate}: ${b.effective ?? 'automatic'} (${b.source})`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<testsuites>',
    `  <testsuite name="${xml(`trtx verify ${r.file}`)}" package="trtx.verify" id="0" tests="${assertions.length}" failures="${failures}" errors="0" time="${ctx.seconds.toFixed(3)}" timestamp="${timestamp(ctx.started)}" hostname="${xml(ctx.hostname || 'localhost')}">`,
    '    <properties>',
    ...props.map(([k, v]) => `      <property name="${xml(k)}" value="${xml(v)}"/>`),
    '    </properties>',
    ...cases,
    `    <system-out>${xml(out.join('\n'))}</system-out>`,
    '    <system-err></system-err>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
