/** The report's stylesheet, inlined in the page, and the pages' Content-Security-Policy. */
import { createHash } from 'node:crypto';

// System fonts only: the page must render offline without fetching anything.
export const CSS = `
:root { color-scheme: light; --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --ok: #15803d; --bad: #b91c1c; --warn: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px; }
header, section, footer { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 20px 24px; margin-bottom: 16px; }
h1 { margin: 0 0 12px; font-size: 26px; }
h2 { margin: 0 0 12px; font-size: 19px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f3f4f6; padding: 1px 4px; border-radius: 3px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
caption { text-align: left; color: var(--muted); font-size: 13px; padding-bottom: 4px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: 13px; color: var(--muted); font-weight: 600; }
h3 { margin: 16px 0 8px; font-size: 16px; }
table.facts { width: auto; }
table.facts th { font-weight: 500; color: var(--muted); padding-right: 24px; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; border-top: 2px solid var(--line); }
tr.chosen td { background: #eff6ff; }
tr.failed td { background: #fef2f2; }
.ok { color: var(--ok); font-weight: 700; }
.bad { color: var(--bad); font-weight: 700; }
.verdict { margin-top: 12px; padding: 16px 20px; border-radius: 8px; font-size: 22px; font-weight: 700; color: #fff; }
.verdict.pass { background: var(--ok); }
.verdict.fail { background: var(--bad); }
.verdict.warn { background: var(--warn); }
.limits { margin-top: 10px; padding: 10px 16px; border-radius: 8px; background: #f9fafb; border: 1px solid var(--line); }
.limits.open { background: #fffbeb; border-color: #fcd34d; }
.limits p { margin: 4px 0; }
.limits ul { margin: 4px 0 4px 20px; padding: 0; }
.meaning { color: var(--muted); font-size: 13px; }
.highlight .meaning { margin-top: 4px; }
.legend { display: flex; flex-wrap: wrap; gap: 16px; font-size: 13px; margin: 4px 0; }
.legend svg.swatch { display: inline-block; vertical-align: -1px; margin-right: 6px; }
.verdict .why { font-size: 15px; font-weight: 400; margin-top: 4px; }
.note { color: var(--muted); font-style: italic; }
.highlight { display: inline-block; background: #eff6ff; border: 1px solid #bfdbfe; border-radius: 8px; padding: 10px 16px; margin-bottom: 12px; }
.highlight .big { font-size: 24px; font-weight: 700; margin-left: 8px; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; font-size: 11px; background: #2563eb; color: #fff; border-radius: 999px; padding: 0 8px; margin-left: 4px; }
figure { margin: 0 0 8px; overflow-x: auto; }
figcaption { color: var(--muted); font-size: 13px; }
svg { display: block; max-width: 100%; height: auto; }
svg text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #374151; }
svg text.val { font-weight: 600; fill: var(--fg); font-size: 11px; }
svg text.axis-label { font-weight: 600; fill: var(--fg); }
svg line.axis { stroke: #6b7280; }
svg line.tick { stroke: #6b7280; }
svg line.grid { stroke: #eef0f3; }
footer { color: var(--muted); font-size: 13px; }
@media print { body { background: #fff; } header, section, footer { border: none; break-inside: avoid; } }
`;

/** A CSP source that allows exactly this inline `<script>` or `<style>` text. */
function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The Content-Security-Policy of a ppdp page (report.html, explore.html): nothing from
 * anywhere (`default-src 'none'`, no connection, no form target, no base URL), and only the
 * page's own inline stylesheets and scripts, by their SHA-256 hashes (never 'unsafe-inline': a
 * value that ever slipped past the escaping could not run a script or inject a style).
 * Elements carry no `style` attributes and no inline event handlers; SVG colours are
 * presentation attributes (`fill`), which a CSP does not govern.
 */
export function contentSecurityPolicy(styles: readonly string[], scripts: readonly string[] = []): string {
  const list = (texts: readonly string[]) => (texts.length > 0 ? texts.map(sha256).join(' ') : "'none'");
  return [
    "default-src 'none'",
    `script-src ${list(scripts)}`,
    `style-src ${list(styles)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** A swatch of colour for a legend: an SVG square (a `style` attribute would need the CSP to allow it). */
export function swatch(color: string): string {
  return `<svg class="swatch" width="10" height="10" aria-hidden="true"><rect width="10" height="10" rx="2" fill="${color}"/></svg>`;
}
