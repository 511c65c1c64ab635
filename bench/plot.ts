/**
 * Minimal SVG line charts for the benchmark result files: a grid of panels, each with its
 * series drawn as lines with points, linear or logarithmic axes, and one legend row at the
 * bottom. No dependencies; the output is deterministic text (same figures → same bytes).
 */

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface PanelOptions {
  readonly title: string;
  readonly series: readonly Series[];
  readonly xLabel: string;
  /** Logarithmic y axis (values ≤ 0 are left out of the range and drawn at its bottom). */
  readonly logY?: boolean;
  /** Logarithmic x axis (points with x ≤ 0 are left out). */
  readonly logX?: boolean;
  /** Tick labels of the x axis (one per distinct x of the points); default String(x). */
  readonly formatX?: (x: number) => string;
}

/** Colours that stay apart in print and for the common colour-vision deficiencies. */
export const PALETTE = ['#1b6ca8', '#9fc5e8', '#6aa84f', '#b6d7a8', '#cc4125', '#e69138'] as const;

/** 10⁵ rather than 100000 for powers of ten; 3·10⁵ for 300000; other values as they are. */
export function powerOfTen(x: number): string {
  const digits = '⁰¹²³⁴⁵⁶⁷⁸⁹';
  const e = Math.floor(Math.log10(x));
  const m = x / 10 ** e;
  if (e < 3 || Math.abs(m - Math.round(m)) > 1e-9) return x.toLocaleString('en');
  const pow = `10${[...String(e)].map((d) => digits[Number(d)]).join('')}`;
  return Math.round(m) === 1 ? pow : `${Math.round(m)}·${pow}`;
}

/** 950, 20k, 1.2M: short tick labels for counts. */
export function compact(x: number): string {
  if (x >= 1e6) return `${Number((x / 1e6).toPrecision(2))}M`;
  if (x >= 1e3) return `${Number((x / 1e3).toPrecision(2))}k`;
  return String(Number(x.toPrecision(2)));
}

export class SvgChart {
  private readonly svg: string[] = [];

  /**
   * A chart of `columns` panels per row, each `cell.w` × `cell.h`; `rows` rows of panels
   * plus `footer` pixels for the legend.
   */
  constructor(
    readonly columns: number,
    readonly rows: number,
    readonly cell = { w: 300, h: 200 },
    readonly pad = { l: 48, r: 10, t: 24, b: 28 },
    readonly footer = 30,
  ) {
    this.svg.push(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${this.width}" height="${this.height}" font-family="sans-serif" font-size="10">`,
    );
    this.svg.push('<rect width="100%" height="100%" fill="white"/>');
  }

  get width(): number {
    return this.columns * this.cell.w;
  }

  get height(): number {
    return this.rows * this.cell.h + this.footer;
  }

  /** Draws panel number `i` (row-major). */
  panel(i: number, options: PanelOptions): void {
    const { w: W, h: H } = this.cell;
    const pad = this.pad;
    const px = (i % this.columns) * W;
    const py = Math.floor(i / this.columns) * H;
    const { title, series, xLabel, logY = false, logX = false, formatX = String } = options;
    const svg = this.svg;
    const all = series
      .flatMap((s) => s.points.map((p) => p[1]))
      .filter((v) => (logY ? v > 0 : Number.isFinite(v)));
    const xs = series.flatMap((s) => s.points.map((p) => p[0])).filter((x) => !logX || x > 0);
    let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
    if (logX) [x0, x1] = [Math.log10(x0), Math.log10(x1)];
    let [y0, y1] = [Math.min(...all), Math.max(...all)];
    if (logY) [y0, y1] = [Math.log10(y0), Math.log10(y1)];
    if (y1 === y0) y1 = y0 + 1;
    const X = (x: number) =>
      px + pad.l + (((logX ? Math.log10(x) : x) - x0) / (x1 - x0 || 1)) * (W - pad.l - pad.r);
    const Y = (y: number) =>
      py + H - pad.b - (((logY ? Math.log10(Math.max(y, 1e-12)) : y) - y0) / (y1 - y0)) * (H - pad.t - pad.b);
    const scale = logX && logY ? ' (log-log)' : logY ? ' (log)' : logX ? ' (log x)' : '';
    svg.push(`<text x="${px + pad.l}" y="${py + 14}" font-weight="bold">${title}${scale}</text>`);
    svg.push(
      `<line x1="${px + pad.l}" y1="${py + H - pad.b}" x2="${px + W - pad.r}" y2="${py + H - pad.b}" stroke="#888"/>`,
    );
    svg.push(
      `<line x1="${px + pad.l}" y1="${py + pad.t}" x2="${px + pad.l}" y2="${py + H - pad.b}" stroke="#888"/>`,
    );
    for (const x of [...new Set(xs)])
      svg.push(`<text x="${X(x)}" y="${py + H - pad.b + 12}" text-anchor="middle">${formatX(x)}</text>`);
    svg.push(`<text x="${px + (W + pad.l) / 2}" y="${py + H - 4}" text-anchor="middle">${xLabel}</text>`);
    for (const t of [0, 0.5, 1]) {
      const v = y0 + t * (y1 - y0);
      const label = logY ? (10 ** v).toPrecision(2) : v.toPrecision(2);
      const y = py + H - pad.b - t * (H - pad.t - pad.b);
      svg.push(`<text x="${px + pad.l - 4}" y="${y + 3}" text-anchor="end">${label}</text>`);
    }
    for (const s of series) {
      const points = logX ? s.points.filter((p) => p[0] > 0) : s.points;
      const d = points.map((p, j) => `${j ? 'L' : 'M'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join('');
      svg.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.8"/>`);
      for (const p of points)
        svg.push(`<circle cx="${X(p[0]).toFixed(1)}" cy="${Y(p[1]).toFixed(1)}" r="2.2" fill="${s.color}"/>`);
    }
  }

  /** One row of colour keys at the bottom, `spacing` pixels apart. */
  legend(entries: readonly { name: string; color: string }[], spacing = 150): void {
    const ly = this.height - 12;
    entries.forEach((e, j) => {
      this.svg.push(`<rect x="${10 + j * spacing}" y="${ly - 8}" width="10" height="10" fill="${e.color}"/>`);
      this.svg.push(`<text x="${24 + j * spacing}" y="${ly + 1}">${e.name}</text>`);
    });
  }

  toString(): string {
    return `${[...this.svg, '</svg>'].join('\n')}\n`;
  }
}
