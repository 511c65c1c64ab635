/**
 * Inline SVG bar charts with labelled axes and ticks: nothing is fetched, so the page renders
 * offline. Every bar is a `rect.mark` (a data mark); every chart is an `svg.chart`.
 */
import { esc, fmtNum, px } from './format.ts';
import { swatch } from './style.ts';

export interface Series {
  name: string;
  color: string;
  values: readonly number[];
}

export interface ChartSpec {
  /** Names the chart for screen readers and as its caption. */
  title: string;
  categories: readonly string[];
  /** One or more series; several are drawn as grouped bars with a legend. */
  series: readonly Series[];
  /** The axis along the categories, and the value axis. */
  categoryAxis: string;
  valueAxis: string;
  /** Bars grow to the right, one row per category (long labels read better). */
  horizontal?: boolean;
  /** The value axis's top, e.g. 1 for shares; a round number above the largest value otherwise. */
  max?: number;
  /** Values are shares, shown as percentages. */
  percent?: boolean;
  /** A bar's colour other than its series' (e.g. bins above a threshold). */
  colorOf?: (category: number, series: number) => string | undefined;
  /** Legend entries beyond the series (e.g. what a highlight colour means). */
  legend?: { label: string; color: string }[];
}

// Okabe–Ito palette: distinguishable for colour-blind readers, and fixed so output is stable.
export const PALETTE = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#CC79A7',
  '#56B4E9',
  '#D55E00',
  '#F0E442',
  '#999999',
];
export const AMBER = '#D55E00';

const WIDTH = 840;
const MAX_LABEL = 24;

/** Ticks from 0 to a round top: steps of 1, 2, 2.5 or 5 times a power of ten, about five of them. */
export function ticks(max: number): number[] {
  const top = max > 0 && Number.isFinite(max) ? max : 1;
  const raw = top / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  const count = Math.ceil(top / step - 1e-9);
  return Array.from({ length: count + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** At most this many values in a chart of an attribute's values: the first ones, the rest summed. */
const MAX_VALUES = 20;

/**
 * Categories for shares of an attribute's values already ordered largest first: the report
 * names no data value, so values are numbered (#1 = most frequent); beyond MAX_VALUES the rest
 * are summed into one bar.
 */
export function rankedValues(series: readonly (readonly number[])[]): {
  categories: string[];
  series: number[][];
} {
  const count = series[0]?.length ?? 0;
  const shown = Math.min(count, MAX_VALUES);
  const rest = count - shown;
  const categories = Array.from({ length: shown }, (_, i) => `#${i + 1}`);
  if (rest > 0) categories.push(`${rest} more`);
  return {
    categories,
    series: series.map((values) => {
      const head = values.slice(0, shown);
      return rest > 0 ? [...head, values.slice(shown).reduce((a, b) => a + b, 0)] : head;
    }),
  };
}

function shorten(label: string): string {
  return label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 1)}…` : label;
}

function finite(v: number): number {
  return Number.isFinite(v) ? Math.max(0, v) : 0;
}

/** The chart in a figure, with its legend (several series or extra entries) and caption. */
export function chart(spec: ChartSpec): string {
  const largest = Math.max(0, ...spec.series.flatMap((s) => s.values.map(finite)));
  const axis = ticks(spec.max !== undefined ? Math.max(spec.max, largest) : largest);
  const top = axis.at(-1)!;
  // Three significant digits on a chart: its bars are read, not copied (tables carry the rest).
  const fmt = (v: number) =>
    !Number.isFinite(v) ? fmtNum(v) : spec.percent ? `${Number((v * 100).toPrecision(3))}%` : fmtNum(v);
  const svg = spec.horizontal ? horizontal(spec, axis, top, fmt) : vertical(spec, axis, top, fmt);
  const entries = [
    ...(spec.series.length > 1 ? spec.series.map((s) => ({ label: s.name, color: s.color })) : []),
    ...(spec.legend ?? []),
  ];
  const legend =
    entries.length > 0
      ? `<div class="legend">${entries
          .map((e) => `<span>${swatch(esc(e.color))}${esc(e.label)}</span>`)
          .join('')}</div>`
      : '';
  return `<figure>${svg}${legend}<figcaption>${esc(spec.title)}</figcaption></figure>`;
}

function open(spec: { title: string }, height: number): string {
  return (
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${px(height)}" width="${WIDTH}" height="${px(height)}" role="img" aria-label="${esc(spec.title)}">` +
    `<title>${esc(spec.title)}</title>\n`
  );
}

function bar(
  spec: ChartSpec,
  c: number,
  s: number,
  x: number,
  y: number,
  w: number,
  h: number,
  fmt: (v: number) => string,
): string {
  const series = spec.series[s]!;
  const color = spec.colorOf?.(c, s) ?? series.color;
  const who = spec.series.length > 1 ? `${series.name}, ` : '';
  const hover = `${who}${spec.categories[c]}: ${fmt(series.values[c]!)}`;
  return `<rect class="mark" x="${px(x)}" y="${px(y)}" width="${px(w)}" height="${px(h)}" fill="${color}"><title>${esc(hover)}</title></rect>`;
}

/** Categories along the bottom, values up the left. */
function vertical(spec: ChartSpec, axis: number[], top: number, fmt: (v: number) => string): string {
  const n = Math.max(1, spec.categories.length);
  const left = 72;
  const right = 12;
  const band = (WIDTH - left - right) / n;
  const longest = Math.max(1, ...spec.categories.map((c) => shorten(c).length));
  // Tilt labels only when they would overlap, so short labels stay horizontal and easy to read.
  const tilt = longest * 7 > band - 4;
  const labelSpace = tilt ? 10 + longest * 5.2 : 20;
  const plotTop = 14;
  const plotH = 200;
  const base = plotTop + plotH;
  const height = base + labelSpace + 30;
  const y = (v: number) => base - (finite(v) / top) * plotH;
  const parts: string[] = [open(spec, height)];
  for (const t of axis) {
    parts.push(
      `<line class="grid" x1="${left}" y1="${px(y(t))}" x2="${WIDTH - right}" y2="${px(y(t))}"/>` +
        `<line class="tick" x1="${left - 5}" y1="${px(y(t))}" x2="${left}" y2="${px(y(t))}"/>` +
        `<text x="${left - 8}" y="${px(y(t) + 4)}" text-anchor="end">${fmt(t)}</text>`,
    );
  }
  const groups = spec.series.length;
  const barW = Math.max(1, (band * 0.75) / groups);
  const showValues = groups === 1 && band >= 28;
  spec.categories.forEach((label, c) => {
    const cx = left + band * (c + 0.5);
    spec.series.forEach((series, s) => {
      const v = finite(series.values[c]!);
      const x = cx - (barW * groups) / 2 + s * barW;
      parts.push(bar(spec, c, s, x, y(v), barW, base - y(v), fmt));
      if (showValues) {
        parts.push(
          `<text class="val" x="${px(cx)}" y="${px(y(v) - 4)}" text-anchor="middle">${fmt(series.values[c]!)}</text>`,
        );
      }
    });
    parts.push(
      `<line class="tick" x1="${px(cx)}" y1="${base}" x2="${px(cx)}" y2="${base + 4}"/>` +
        (tilt
          ? `<text x="${px(cx)}" y="${base + 14}" text-anchor="end" transform="rotate(-40 ${px(cx)} ${base + 14})">${esc(shorten(label))}</text>`
          : `<text x="${px(cx)}" y="${base + 17}" text-anchor="middle">${esc(shorten(label))}</text>`),
    );
  });
  parts.push(
    `<line class="axis" x1="${left}" y1="${plotTop}" x2="${left}" y2="${base}"/>` +
      `<line class="axis" x1="${left}" y1="${base}" x2="${WIDTH - right}" y2="${base}"/>` +
      `<text class="axis-label" x="${px((left + WIDTH - right) / 2)}" y="${px(height - 6)}" text-anchor="middle">${esc(spec.categoryAxis)}</text>` +
      `<text class="axis-label" x="14" y="${px(base - plotH / 2)}" text-anchor="middle" transform="rotate(-90 14 ${px(base - plotH / 2)})">${esc(spec.valueAxis)}</text>`,
  );
  return `${parts.join('\n')}\n</svg>`;
}

/** One row per category, labels on the left, values along the bottom. */
function horizontal(spec: ChartSpec, axis: number[], top: number, fmt: (v: number) => string): string {
  const longest = Math.max(1, ...spec.categories.map((c) => shorten(c).length));
  const left = Math.min(200, 16 + longest * 7);
  const right = 64;
  const groups = spec.series.length;
  const barH = groups > 1 ? 11 : 14;
  const rowH = barH * groups + 8;
  const plotTop = 24;
  const plotW = WIDTH - left - right;
  const base = plotTop + rowH * Math.max(1, spec.categories.length);
  const height = base + 44;
  const x = (v: number) => left + (finite(v) / top) * plotW;
  const parts: string[] = [open(spec, height)];
  for (const t of axis) {
    parts.push(
      `<line class="grid" x1="${px(x(t))}" y1="${plotTop}" x2="${px(x(t))}" y2="${base}"/>` +
        `<line class="tick" x1="${px(x(t))}" y1="${base}" x2="${px(x(t))}" y2="${base + 5}"/>` +
        `<text x="${px(x(t))}" y="${base + 17}" text-anchor="middle">${fmt(t)}</text>`,
    );
  }
  spec.categories.forEach((label, c) => {
    const rowTop = plotTop + rowH * c + 4;
    spec.series.forEach((series, s) => {
      const v = finite(series.values[c]!);
      const y = rowTop + s * barH;
      parts.push(bar(spec, c, s, left, y, x(v) - left, barH - 1, fmt));
      parts.push(
        `<text class="val" x="${px(x(v) + 4)}" y="${px(y + barH - 3)}">${fmt(series.values[c]!)}</text>`,
      );
    });
    const mid = rowTop + (barH * groups) / 2;
    parts.push(
      `<line class="tick" x1="${left - 4}" y1="${px(mid)}" x2="${left}" y2="${px(mid)}"/>` +
        `<text x="${left - 8}" y="${px(mid + 4)}" text-anchor="end">${esc(shorten(label))}</text>`,
    );
  });
  parts.push(
    `<line class="axis" x1="${left}" y1="${plotTop}" x2="${left}" y2="${base}"/>` +
      `<line class="axis" x1="${left}" y1="${base}" x2="${left + plotW}" y2="${base}"/>` +
      `<text class="axis-label" x="${px(left + plotW / 2)}" y="${px(height - 6)}" text-anchor="middle">${esc(spec.valueAxis)}</text>` +
      `<text class="axis-label" x="4" y="14">${esc(spec.categoryAxis)}</text>`,
  );
  return `${parts.join('\n')}\n</svg>`;
}

export interface StepSeries {
  name: string;
  color: string;
  /** [x, y] points in x order; the value holds until the next point. */
  points: readonly (readonly [number, number])[];
  /** Drawn dashed (e.g. a bound beside the value it bounds). */
  dashed?: boolean;
}

export interface StepChartSpec {
  title: string;
  series: readonly StepSeries[];
  xAxis: string;
  yAxis: string;
  /** A point's hover text beyond its series and values (e.g. its wall time). */
  hover?: (series: number, point: number) => string;
}

/**
 * Series that change by steps (a search's best value and bound as nodes are checked): each a
 * step line (`polyline.series`) from point to point, every point a `circle.mark` (a data mark).
 */
export function stepChart(spec: StepChartSpec): string {
  const xs = spec.series.flatMap((s) => s.points.map((p) => finite(p[0])));
  const ys = spec.series.flatMap((s) => s.points.map((p) => finite(p[1])));
  const xAxis = ticks(Math.max(0, ...xs));
  const yAxis = ticks(Math.max(0, ...ys));
  const xTop = xAxis.at(-1)!;
  const yTop = yAxis.at(-1)!;
  const left = 72;
  const right = 16;
  const plotTop = 14;
  const plotH = 180;
  const base = plotTop + plotH;
  const height = base + 46;
  const x = (v: number) => left + (finite(v) / xTop) * (WIDTH - left - right);
  const y = (v: number) => base - (finite(v) / yTop) * plotH;
  const parts: string[] = [open(spec, height)];
  for (const t of yAxis) {
    parts.push(
      `<line class="grid" x1="${left}" y1="${px(y(t))}" x2="${WIDTH - right}" y2="${px(y(t))}"/>` +
        `<text x="${left - 8}" y="${px(y(t) + 4)}" text-anchor="end">${fmtNum(t)}</text>`,
    );
  }
  for (const t of xAxis) {
    parts.push(
      `<line class="tick" x1="${px(x(t))}" y1="${base}" x2="${px(x(t))}" y2="${base + 5}"/>` +
        `<text x="${px(x(t))}" y="${base + 17}" text-anchor="middle">${fmtNum(t)}</text>`,
    );
  }
  spec.series.forEach((s, i) => {
    const path: string[] = [];
    s.points.forEach(([px0, py], j) => {
      if (j > 0) path.push(`${px(x(px0))},${px(y(s.points[j - 1]![1]))}`);
      path.push(`${px(x(px0))},${px(y(py))}`);
    });
    parts.push(
      `<polyline class="series" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${path.join(' ')}"/>`,
    );
    s.points.forEach(([px0, py], j) => {
      const extra = spec.hover?.(i, j);
      const hover = `${s.name}: ${fmtNum(py)} at ${fmtNum(px0)}${extra ? ` (${extra})` : ''}`;
      parts.push(
        `<circle class="mark" cx="${px(x(px0))}" cy="${px(y(py))}" r="2.5" fill="${s.color}"><title>${esc(hover)}</title></circle>`,
      );
    });
  });
  parts.push(
    `<line class="axis" x1="${left}" y1="${plotTop}" x2="${left}" y2="${base}"/>` +
      `<line class="axis" x1="${left}" y1="${base}" x2="${WIDTH - right}" y2="${base}"/>` +
      `<text class="axis-label" x="${px((left + WIDTH - right) / 2)}" y="${px(height - 6)}" text-anchor="middle">${esc(spec.xAxis)}</text>` +
      `<text class="axis-label" x="14" y="${px(base - plotH / 2)}" text-anchor="middle" transform="rotate(-90 14 ${px(base - plotH / 2)})">${esc(spec.yAxis)}</text>`,
  );
  const legend = `<div class="legend">${spec.series
    .map((s) => `<span>${swatch(esc(s.color))}${esc(s.name)}</span>`)
    .join('')}</div>`;
  return `<figure>${parts.join('\n')}\n</svg>${legend}<figcaption>${esc(spec.title)}</figcaption></figure>`;
}
