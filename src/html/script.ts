// The report's only script, inlined: keyboard navigation of the drawings.
// Each drawing has one tensor in the tab order; Left/Right (and Home/End)
// move between tensors, Up/Down between arenas; moving or Enter selects the
// tensor: its table row is highlighted and its description is announced in
// the status region. The page is complete without it (tables, titles).
export const SCRIPT = `(() => {
  const live = document.getElementById('live');
  const select = (el) => {
    for (const x of document.querySelectorAll('.hl')) x.classList.remove('hl');
    el.classList.add('hl');
    const row = document.getElementById(el.dataset.row);
    if (row) {
      row.classList.add('hl');
      const details = row.closest('details');
      if (details) details.open = true;
    }
    if (live) live.textContent = el.getAttribute('aria-label');
    return row;
  };
  const move = (items, from, to) => {
    if (from) from.tabIndex = -1;
    to.tabIndex = 0;
    to.focus();
    select(to);
  };
  for (const svg of document.querySelectorAll('svg[data-nav]')) {
    const items = [...svg.querySelectorAll('rect.t')];
    const arenaOf = (el) => el.closest('g.arena');
    svg.addEventListener('keydown', (e) => {
      const cur = document.activeElement;
      const i = items.indexOf(cur);
      if (i < 0) return;
      let j = i;
      if (e.key === 'ArrowRight') j = Math.min(items.length - 1, i + 1);
      else if (e.key === 'ArrowLeft') j = Math.max(0, i - 1);
      else if (e.key === 'Home') j = 0;
      else if (e.key === 'End') j = items.length - 1;
      else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        const a = arenaOf(cur);
        const step = e.key === 'ArrowDown' ? 1 : -1;
        let k = i;
        while (k >= 0 && k < items.length && arenaOf(items[k]) === a) k += step;
        if (k < 0 || k >= items.length) return e.preventDefault();
        const b = arenaOf(items[k]);
        j = items.findIndex((x) => arenaOf(x) === b);
      } else if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        const row = select(cur);
        if (row) row.scrollIntoView({ block: 'nearest' });
        return;
      } else return;
      e.preventDefault();
      move(items, cur, items[j]);
    });
    svg.addEventListener('click', (e) => {
      const t = e.target.closest && e.target.closest('rect.t');
      if (!t) return;
      move(items, items.find((x) => x.tabIndex === 0), t);
    });
  }
})();`;
