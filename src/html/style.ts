// The report's stylesheet, inlined: readable in light and dark
// (prefers-color-scheme), visible focus, colours paired with text labels and
// legends so that nothing is said by colour alone.
export const STYLE = `
:root { color-scheme: light dark;
  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --panel: #f6f8fa;
  --arena-host: #eef1f4; --arena-dev: #e8f3ea; --band: #59636e;
  --buf: #8250df; --bind: #0969da; --io: #9a6700; --act: #818b98;
  --h2d: #cf222e; --d2h: #1a7f37; --focus: #fb8500; --hl: #fff8c5; --label: #ffffff; }
@media (prefers-color-scheme: dark) { :root {
  --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --border: #3d444d; --panel: #151b23;
  --arena-host: #1c2430; --arena-dev: #14261a; --band: #9198a1;
  --buf: #a371f7; --bind: #4493f8; --io: #d29922; --act: #6e7681;
  --h2d: #ff7b72; --d2h: #3fb950; --focus: #ffa657; --hl: #3b2e00; --label: #0d1117; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header, nav, main, footer { padding: 0 24px; max-width: 1400px; margin: 0 auto; }
header { padding-top: 16px; border-bottom: 1px solid var(--border); }
h1 { font-size: 1.5rem; margin: 0.3em 0; } h2 { font-size: 1.25rem; margin-top: 2em; border-bottom: 1px solid var(--border); }
h3 { font-size: 1.05rem; } h4 { font-size: 1rem; margin-bottom: 0.3em; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.92em; }
a { color: var(--bind); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -10000px; } .skip:focus { left: 8px; top: 8px; background: var(--panel); padding: 8px; z-index: 2; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.meta { color: var(--muted); margin: 0 0 12px; }
.totals { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 8px 0 12px; }
.totals div { background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 6px 12px; }
.totals dt { color: var(--muted); font-size: 0.85em; } .totals dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
figure { margin: 8px 0; } figcaption { color: var(--muted); font-size: 0.9em; margin-bottom: 4px; }
svg.plan { display: block; max-width: 100%; height: auto; background: var(--bg); }
svg.defs { position: absolute; }
.arena-bar { fill: var(--arena-host); stroke: var(--border); }
.device .arena-bar { fill: var(--arena-dev); }
.arena-bar.magnified { stroke-dasharray: 4 3; stroke: var(--muted); }
.arena-label { fill: var(--fg); font-size: 12px; font-weight: 600; } .arena-size, .band-label { fill: var(--muted); font-size: 11px; }
rect.t { stroke: var(--bg); stroke-width: 1; cursor: pointer; }
.t-buffer { fill: var(--buf); background: var(--buf); } .t-binding { fill: var(--bind); background: var(--bind); }
.t-io { fill: var(--io); background: var(--io); } .t-activation { fill: var(--act); background: var(--act); }
rect.t:focus { outline: none; stroke: var(--focus); stroke-width: 3; }
rect.t.hl { stroke: var(--fg); stroke-width: 2.5; }
.t-label { fill: var(--label); font-size: 11px; pointer-events: none; }
path.copy { fill: none; stroke-width: 1.6; opacity: 0.85; } path.h2d { stroke: var(--h2d); } path.d2h { stroke: var(--d2h); stroke-dasharray: 5 3; }
.head-h2d path { fill: var(--h2d); } .head-d2h path { fill: var(--d2h); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; padding: 0; list-style: none; font-size: 0.9em; color: var(--muted); }
.sw { display: inline-block; width: 12px; height: 12px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.sw.h2d { background: var(--h2d); } .sw.d2h { background: repeating-linear-gradient(90deg, var(--d2h) 0 5px, transparent 5px 8px); }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.9em; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid var(--border); padding: 3px 8px; text-align: left; vertical-align: top; }
thead th { background: var(--panel); } tbody th { font-weight: 500; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.hl > * { background: var(--hl); }
.live { min-height: 1.5em; background: var(--panel); border: 1px solid var(--border); border-radius: 6px; padding: 6px 12px; position: sticky; bottom: 0; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; }
@media (max-width: 900px) { .sides { grid-template-columns: 1fr; } }
.side { min-width: 0; } .side h3 { margin-top: 0.5em; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; }
.change-add { color: var(--d2h); } .change-del { color: var(--h2d); }
.error { color: var(--h2d); }
footer { color: var(--muted); font-size: 0.85em; border-top: 1px solid var(--border); margin-top: 32px; padding-top: 8px; padding-bottom: 24px; }
.wide { overflow-x: auto; }
`;
