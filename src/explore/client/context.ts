/**
 * What the explorer page script's parts share: each part runs in order (page.ts inlines their
 * sources), reads what the parts before it put in `ctx` and adds its own.
 */

// biome-ignore lint/suspicious/noExplicitAny: the embedded data, read as written
export type Json = any;

export interface ClientContext {
  /** The page's embedded data (explorer.ts, ExplorerData). */
  data: Json;
  esc(v: unknown): string;
  fmt(n: number | null | undefined): string;
  pct(share: number): string;
  /** Says `text` to screen readers (the live region). */
  announce(text: string): void;
  choiceTitle(c: Json): string;
  bars(title: string, cats: string[], values: number[], xLabel: string, yLabel: string): string;
  /** The pane a pick goes to: 0 left, 1 right. */
  slot(): number;
  /** The lattice node each pane shows, when it shows one. */
  pickedNodes: (number | null)[];
  /** Renders choice `index` (lattice node `node`) into the current slot's pane. */
  pick(index: number, node?: number): void;
  /** A node's id from its levels (the lattice part sets it). */
  indexOf(levels: number[]): number;
  /** Rings the picked nodes on the lattice (a no-op until the lattice is drawn). */
  drawPicked(): void;
}

/** A context before any part has run: what no part has set yet throws or does nothing. */
export function newClientContext(): ClientContext {
  const unset = (): never => {
    throw new Error('explorer script: a part ran before the one it needs');
  };
  return {
    data: undefined,
    esc: unset,
    fmt: unset,
    pct: unset,
    announce: unset,
    choiceTitle: unset,
    bars: unset,
    slot: unset,
    pickedNodes: [null, null],
    pick: unset,
    indexOf: unset,
    drawPicked: () => {},
  };
}
