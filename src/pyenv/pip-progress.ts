// Turns pip's output into a few progress messages: which package is being
// downloaded (the large ones take the time) and how many are being
// installed. pip's own lines stay in the failure message only.

export function pipProgress(report: (message: string) => void): (chunk: string) => void {
  let pending = '';
  let resolved = 0;
  return (chunk: string) => {
    pending += chunk;
    const lines = pending.split(/\r?\n/);
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const text = line.trim();
      let m: RegExpExecArray | null;
      if ((m = /^Collecting (\S+)/.exec(text))) {
        resolved += 1;
        if (resolved === 1 || resolved % 10 === 0) report(`resolving packages (${resolved} so far): ${m[1]}`);
      } else if ((m = /^(?:Downloading|Processing) (\S+?)(?:\.whl|\.tar\.gz)?(?: \(([^)]+)\))?$/.exec(text))) {
        // Only the large ones are worth a line: they are where the time goes.
        if (m[2] && /\bMB|\bGB/.test(m[2])) {
          const name = (m[1] ?? '').split('/').pop()!.split('-').slice(0, 2).join(' ');
          report(`fetching ${name} (${m[2]})`);
        }
      } else if ((m = /^Installing collected packages: (.*)$/.exec(text))) {
        report(`installing ${(m[1] ?? '').split(',').length} packages (torch and executorch take a minute)`);
      } else if (/^Successfully installed /.test(text)) {
        report('installed; checking the environment');
      }
    }
  };
}
