/**
 * The explorer page script's lattice: every node drawn (one SVG path per status, so 10,000
 * nodes draw at once), found by its levels, picked by click, Enter or the node search, with
 * pan and zoom through the viewBox and a keyboard cursor that shows a node's neighbours.
 */
import type { ClientContext } from './context.ts';

export function clientLattice(ctx: ClientContext): void {
  const { data, fmt, announce, pick } = ctx;

  const L = data.lattice;
  const radix: number[] = [];
  function indexOf(levels: number[]): number {
    let id = 0;
    for (let i = 0; i < levels.length; i++) id += levels[i]! * radix[i]!;
    return id;
  }
  ctx.indexOf = indexOf;
  if (!L) return;
  const m = L.heights.length;
  let size = 1;
  for (let i = m - 1; i >= 0; i--) {
    radix[i] = size;
    size *= L.heights[i] + 1;
  }
  const levelsOf = (id: number) =>
    L.heights.map((h: number, i: number) => Math.floor(id / radix[i]!) % (h + 1));
  const statusOf = (id: number): string => {
    const c = L.choiceOf[id];
    return c >= 0 ? data.choices[c].status : 'unchecked';
  };
  function describe(id: number): string {
    const c = L.choiceOf[id] >= 0 ? data.choices[L.choiceOf[id]] : null;
    const s = statusOf(id);
    const what = !c
      ? 'not checked'
      : c.feasible
        ? `${s}, k ${fmt(c.k)}, ${fmt(c.suppressedRows)} rows suppressed, ${c.objective?.name ?? ''} ${fmt(c.objective?.value)}`
        : `infeasible: ${c.reason}`;
    return `Node ${levelsOf(id).join(',')}: ${what}`;
  }

  const svg = document.getElementById('lattice') as unknown as SVGSVGElement | null;
  const find = document.getElementById('node-search') as HTMLFormElement;
  const msg = document.getElementById('search-msg')!;
  const pickNode = (id: number) => {
    const c = L.choiceOf[id];
    if (c < 0) {
      announce(`${describe(id)}: this page has no data for it.`);
      return;
    }
    pick(c, id);
  };
  find.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = (document.getElementById('node-query') as HTMLInputElement).value.trim();
    const parts = q.split(/[\s,]+/).filter((x) => x !== '');
    const levels = parts.map((p) => {
      const named = /^(.+)=(\d+)$/.exec(p);
      return named ? Number(named[2]) : /^\d+$/.test(p) ? Number(p) : Number.NaN;
    });
    if (
      levels.length !== m ||
      levels.some((v: number, i: number) => !Number.isInteger(v) || v < 0 || v > L.heights[i])
    ) {
      msg.textContent = `Give ${m} levels, each from 0 to its height (${L.heights.join(',')}), e.g. ${L.heights.map(() => 0).join(',')}.`;
      return;
    }
    const id = indexOf(levels);
    msg.textContent = describe(id);
    if (svg) moveCursor(id);
    pickNode(id);
  });
  if (!svg) return;

  // Layout: a band per total level (the top node up), its nodes in id order wrapped into lines
  // of at most PER_LINE, centred; bands are separated by a gap.
  const t0 = performance.now();
  const D = 12;
  const GAP = 18;
  const PER_LINE = Math.min(200, Math.max(20, Math.ceil(Math.sqrt(size) * 1.2)));
  let maxLevel = 0;
  for (const h of L.heights) maxLevel += h;
  const rows: number[][] = Array.from({ length: maxLevel + 1 }, () => []);
  const level = new Int32Array(size);
  const slotOf = new Int32Array(size);
  for (let id = 0; id < size; id++) {
    let s = 0;
    for (let i = 0; i < m; i++) s += Math.floor(id / radix[i]!) % (L.heights[i] + 1);
    level[id] = s;
    slotOf[id] = rows[s]!.push(id) - 1;
  }
  const bandTop: number[] = new Array(maxLevel + 1);
  let yAt = 0;
  for (let s = maxLevel; s >= 0; s--) {
    bandTop[s] = yAt;
    yAt += Math.ceil(rows[s]!.length / PER_LINE) * D + GAP;
  }
  const width = Math.min(PER_LINE, Math.max(...rows.map((r) => r.length))) * D;
  const height = yAt - GAP;
  const lineStart = (s: number, line: number) =>
    (width - Math.min(PER_LINE, rows[s]!.length - line * PER_LINE) * D) / 2;
  const xOf = (id: number) => {
    const s = level[id]!;
    const j = slotOf[id]!;
    return lineStart(s, Math.floor(j / PER_LINE)) + (j % PER_LINE) * D + D / 2;
  };
  const yOf = (id: number) => bandTop[level[id]!]! + Math.floor(slotOf[id]! / PER_LINE) * D + D / 2;
  const COLORS: Record<string, string> = {
    optimal: '#1d4ed8',
    feasible: '#15803d',
    infeasible: '#dc2626',
    unchecked: '#cbd5e1',
  };
  const paths: Record<string, string[]> = { unchecked: [], infeasible: [], feasible: [], optimal: [] };
  const r = 4;
  for (let id = 0; id < size; id++) {
    const x = xOf(id) - r;
    paths[statusOf(id)]!.push(
      `M${x.toFixed(1)} ${yOf(id)}a${r} ${r} 0 1 0 ${2 * r} 0a${r} ${r} 0 1 0 ${-2 * r} 0`,
    );
  }
  const layers = [
    `<g class="levels">${rows.map((row, s) => `<text x="-8" y="${bandTop[s]! + (Math.ceil(row.length / PER_LINE) * D) / 2 + 4}" text-anchor="end" font-size="11">${s}</text>`).join('')}<text x="-8" y="-6" text-anchor="end" font-size="11" class="axis-label">total level</text></g>`,
    ...Object.entries(paths).map(
      ([s, p]) =>
        `<path class="nodes nodes-${s}" data-status="${s}" fill="${COLORS[s]}" d="${p.join('')}"><title>${s === 'unchecked' ? 'not checked' : s} nodes</title></path>`,
    ),
    '<g id="lattice-edges" stroke="#94a3b8" stroke-width="1"></g><g id="lattice-picked"></g><circle id="lattice-cursor" r="8" fill="none" stroke="#111827" stroke-width="2" visibility="hidden"/>',
  ];
  svg.insertAdjacentHTML('beforeend', layers.join(''));
  const full = { x: -90, y: -20, w: width + 110, h: height + 30 };
  const vb = { ...full };
  const setView = () => svg.setAttribute('viewBox', `${vb.x} ${vb.y} ${vb.w} ${vb.h}`);
  setView();
  // For scripts driving the page (and its browser test): a node's centre on screen.
  (window as unknown as { ppdpLattice: unknown }).ppdpLattice = {
    center(levels: number[]) {
      const id = indexOf(levels);
      const p = svg.createSVGPoint();
      p.x = xOf(id);
      p.y = yOf(id);
      const q = p.matrixTransform(svg.getScreenCTM()!);
      return { clientX: q.x, clientY: q.y };
    },
  };
  svg.setAttribute('data-draw-ms', String(Math.round((performance.now() - t0) * 10) / 10));
  svg.setAttribute('data-nodes', String(size));

  const zoom = (f: number, cx = vb.x + vb.w / 2, cy = vb.y + vb.h / 2) => {
    const w = Math.min(full.w * 2, Math.max(40, vb.w * f));
    const h = (vb.h * w) / vb.w;
    vb.x = cx - ((cx - vb.x) * w) / vb.w;
    vb.y = cy - ((cy - vb.y) * h) / vb.h;
    vb.w = w;
    vb.h = h;
    setView();
  };
  document.getElementById('zoom-in')!.addEventListener('click', () => zoom(0.7));
  document.getElementById('zoom-out')!.addEventListener('click', () => zoom(1 / 0.7));
  document.getElementById('zoom-fit')!.addEventListener('click', () => {
    Object.assign(vb, full);
    setView();
  });
  const toSvg = (e: { clientX: number; clientY: number }) => {
    const pt = svg.createSVGPoint();
    pt.x = e.clientX;
    pt.y = e.clientY;
    return pt.matrixTransform(svg.getScreenCTM()!.inverse());
  };
  svg.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const p = toSvg(e);
      zoom(e.deltaY < 0 ? 0.85 : 1 / 0.85, p.x, p.y);
    },
    { passive: false },
  );
  let drag: { x: number; y: number; moved: boolean } | null = null;
  svg.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, y: e.clientY, moved: false };
  });
  svg.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    const ctm = svg.getScreenCTM()!;
    vb.x -= dx / ctm.a;
    vb.y -= dy / ctm.d;
    drag.x = e.clientX;
    drag.y = e.clientY;
    setView();
  });
  svg.addEventListener('pointerup', (e) => {
    const wasDrag = drag?.moved;
    drag = null;
    if (wasDrag) return;
    const id = nodeAt(toSvg(e));
    if (id >= 0) {
      moveCursor(id);
      pickNode(id);
    }
  });
  function nodeAt(p: { x: number; y: number }): number {
    let s = maxLevel;
    while (s > 0 && p.y >= bandTop[s - 1]!) s--;
    const row = rows[s]!;
    const line = Math.floor((p.y - bandTop[s]!) / D);
    if (line < 0 || line * PER_LINE >= row.length) return -1;
    const col = Math.round((p.x - lineStart(s, line) - D / 2) / D);
    if (col < 0 || col >= PER_LINE) return -1;
    const id = row[line * PER_LINE + col];
    if (id === undefined || Math.hypot(p.x - xOf(id), p.y - yOf(id)) > D * 0.75) return -1;
    return id;
  }

  let cursor = L.choiceOf.findIndex((c: number) => c >= 0 && data.choices[c].status === 'optimal');
  if (cursor < 0) cursor = 0;
  function moveCursor(id: number): void {
    cursor = id;
    const c = document.getElementById('lattice-cursor')!;
    c.setAttribute('cx', String(xOf(id)));
    c.setAttribute('cy', String(yOf(id)));
    c.setAttribute('visibility', 'visible');
    // The node's direct neighbours, so the lattice's order is visible where one looks.
    const edges: string[] = [];
    const lv = levelsOf(id);
    for (let i = 0; i < m; i++) {
      for (const d of [-1, 1]) {
        const l = lv[i] + d;
        if (l < 0 || l > L.heights[i]) continue;
        const n = id + d * radix[i]!;
        edges.push(`<line x1="${xOf(id)}" y1="${yOf(id)}" x2="${xOf(n)}" y2="${yOf(n)}"/>`);
      }
    }
    document.getElementById('lattice-edges')!.innerHTML = edges.join('');
    const x = xOf(id);
    const y = yOf(id);
    if (x < vb.x || x > vb.x + vb.w || y < vb.y || y > vb.y + vb.h) {
      vb.x = x - vb.w / 2;
      vb.y = y - vb.h / 2;
      setView();
    }
    document.getElementById('lattice-current')!.textContent = describe(id);
    svg!.setAttribute('aria-valuetext', describe(id));
  }
  function drawPicked(): void {
    document.getElementById('lattice-picked')!.innerHTML = ctx.pickedNodes
      .map((id, s) =>
        id === null || id < 0 || id >= size
          ? ''
          : `<circle cx="${xOf(id)}" cy="${yOf(id)}" r="7" fill="none" stroke="#f59e0b" stroke-width="3"><title>${s === 0 ? 'left' : 'right'} pick</title></circle>`,
      )
      .join('');
  }
  ctx.drawPicked = drawPicked;
  svg.addEventListener('focus', () => moveCursor(cursor));
  svg.addEventListener('keydown', (e) => {
    const s = level[cursor]!;
    const i = slotOf[cursor]!;
    let next = cursor;
    const nearestIn = (row: number[] | undefined) => {
      if (!row || row.length === 0) return cursor;
      let best = row[0]!;
      const d = (id: number) => Math.hypot(xOf(id) - xOf(cursor), yOf(id) - yOf(cursor));
      for (const id of row) if (d(id) < d(best)) best = id;
      return best;
    };
    if (e.key === 'ArrowLeft') next = rows[s]![Math.max(0, i - 1)]!;
    else if (e.key === 'ArrowRight') next = rows[s]![Math.min(rows[s]!.length - 1, i + 1)]!;
    else if (e.key === 'ArrowUp') next = nearestIn(rows[s + 1]);
    else if (e.key === 'ArrowDown') next = nearestIn(rows[s - 1]);
    else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      pickNode(cursor);
      return;
    } else if (e.key === '+' || e.key === '=') zoom(0.7);
    else if (e.key === '-') zoom(1 / 0.7);
    else return;
    e.preventDefault();
    moveCursor(next);
  });
}
