// The end of a tool's output for a one-line or short message: why pip, cmake,
// the bridge or the corpus build failed is in its last lines, and blank lines
// there say nothing.

/** The last `n` non-empty lines of `text` (LF or CRLF). */
export function lastLines(text: string, n: number): string[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .slice(-n);
}
