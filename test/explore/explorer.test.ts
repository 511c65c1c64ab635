/**
 * The explorer's data and page without a browser: distinct solutions merged with the values
 * they span, the lattice judged under the spec's own parameters, the preview holding only
 * labels some choice releases, Mondrian's frontier without a lattice, and --serve on the
 * loopback interface only.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request, type Server } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyCommand } from '../../src/cli/apply.ts';
import { explore } from '../../src/explore/explorer.ts';
import { parseVary, specWith } from '../../src/explore/frontier.ts';
import { explorerCsp, explorerHtml } from '../../src/explore/page.ts';
import { allowedHost, serveExplorer } from '../../src/explore/serve.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

describe('explore() on 1,500 Adult rows', () => {
  const ws = adultWorkspace(1500);
  const spec = loadSpec(ws.spec);
  const table = readInput(spec);
  const varies = [parseVary('k=2..12'), parseVary('maxSuppression=0,0.05')];
  const data = explore(spec, table, varies, { specPath: 'release.json', kernel: wasmGroupingKernel });

  it('merges runs with the same outcome into one solution, with the values it spans', () => {
    expect(data.points).toHaveLength(22);
    const solutions = [...new Set(data.points.map((p) => p.choice))];
    expect(solutions.length).toBeLessThan(22);
    for (const c of solutions) {
      const runs = data.frontier.points.filter((_, i) => data.points[i]!.choice === c);
      // One outcome per solution.
      expect(new Set(runs.map((p) => JSON.stringify([p.node, p.suppressedRows, p.classes]))).size).toBe(1);
      const spans = data.choices[c]!.spans!;
      for (const p of runs) expect(spans).toContain(`maxSuppression = ${p.values['maxSuppression']}`);
    }
    const merged = data.choices.find((c) => c.kind === 'solution' && /k = \d+–\d+/.test(c.spans!));
    expect(merged, 'some solution spans a range of k').toBeDefined();
  });

  it('judges every node under the spec’s own parameters, the optimum being the spec’s own solution', () => {
    const lattice = data.lattice!;
    expect(lattice.evaluated).toBe('all');
    expect(lattice.choiceOf.every((c) => c >= 0)).toBe(true);
    const nodes = lattice.choiceOf.map((c) => data.choices[c]!);
    expect(nodes.filter((c) => c.status === 'optimal')).toHaveLength(1);
    const own = data.points.find((p) => p.values['k'] === 5 && p.values['maxSuppression'] === 0.02);
    // The spec's own values are not in the grid (maxSuppression 0.02): its optimum comes from its own search.
    expect(own).toBeUndefined();
    const optimal = nodes.find((c) => c.status === 'optimal')!;
    expect(optimal.k).toBeGreaterThanOrEqual(5);
    expect(optimal.command).toBe('ppdp release release.json --out out/release');
    // Feasible nodes meet k within the limit; infeasible ones say why.
    const limit = Math.floor(0.02 * table.rowCount);
    for (const c of nodes) {
      if (c.feasible) {
        expect(c.k).toBeGreaterThanOrEqual(5);
        expect(c.suppressedRows).toBeLessThanOrEqual(limit);
      } else expect(c.reason).toMatch(/rows/);
    }
    expect(nodes.some((c) => !c.feasible)).toBe(true);
    // The top node generalizes everything: feasible, and its command applies it by name.
    const top = nodes.at(-1)!;
    expect(top.levels).toEqual(lattice.heights);
    expect(top.command).toMatch(/^ppdp apply --node sex=\d,age=\d.* release\.json --out out\/node-/);
  });

  it('of a larger lattice, evaluates the nodes the search checked, the same as when all are', () => {
    const part = explore(spec, table, [parseVary('k=4..5')], {
      specPath: 'release.json',
      kernel: wasmGroupingKernel,
      maxEvaluatedNodes: 400,
    });
    const lattice = part.lattice!;
    expect(lattice.evaluated).toBe('checked');
    const evaluated = lattice.choiceOf.map((c, id) => [c, id] as const).filter(([c]) => c >= 0);
    expect(evaluated.length).toBeGreaterThan(10);
    expect(evaluated.length).toBeLessThanOrEqual(400);
    for (const [c, id] of evaluated) {
      const mine = part.choices[c]!;
      const whole = data.choices[data.lattice!.choiceOf[id]!]!;
      expect([mine.status, mine.k, mine.suppressedRows]).toEqual([
        whole.status,
        whole.k,
        whole.suppressedRows,
      ]);
    }
    expect(evaluated.filter(([c]) => part.choices[c]!.status === 'optimal')).toHaveLength(1);
    expect(explorerHtml(part)).toContain('the nodes the search checked evaluated');
  });

  it('embeds the first released rows of the spec’s own choice only', () => {
    const preview = data.preview!;
    // The spec's own values are not in the grid: its choice is the lattice's optimum.
    const own = data.choices[preview.choice]!;
    expect(own.status).toBe('optimal');
    expect(own.preview).toBe(true);
    expect(preview.rows).toHaveLength(50);
    // Each QI cell is the optimum's label (or * when masked); nothing else is embedded.
    const qis = data.lattice!.qis;
    const masked = new Set(preview.masked);
    for (const [j, row] of preview.rows.entries()) {
      expect(row).toHaveLength(preview.columns.length);
      for (const [col, cell] of row.entries())
        if (preview.quasiIdentifying[col] && masked.has(j)) expect(cell).toBe('*');
    }
    expect(preview.columns.filter((_, col) => preview.quasiIdentifying[col])).toEqual(qis);
    // Other choices show these rows only when their own first rows are the same cells: same node.
    const showing = data.choices.filter((c) => c.preview);
    expect(showing.length).toBeGreaterThanOrEqual(1);
    for (const c of showing) expect(c.levels).toEqual(own.levels);
    expect(data.choices.filter((c) => c.kind === 'node' && c.preview)).toEqual([own]);
    const html = explorerHtml(data);
    expect(html).toContain('the page holds the rows of one choice only');
  });

  it('renders a page with the spec marked, labelled axes, and a CSP that forbids requests', () => {
    const html = explorerHtml(data);
    expect(html).toContain(`content="default-src 'none'`);
    // The CSP allows the page's own script and stylesheet by hash, nothing inline besides.
    const csp = /http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(html)![1]!;
    expect(csp).not.toContain('unsafe');
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(csp).toContain(`script-src ${hash(script)};`);
    expect(csp).toContain(`style-src ${hash(style)};`);
    expect(csp).toContain("connect-src 'none'");
    expect(html).not.toMatch(/\sstyle="|\son[a-z]+="/);
    expect(html).toContain('spec: k = 5');
    expect(html).toContain('k (smallest class, rows)');
    expect(html).toContain('NCP (information lost, 0–1)');
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html.match(/class="pt mark" tabindex="0" role="button"/g)!.length).toBeGreaterThanOrEqual(22);
    // The markup (the inline script aside) shows no missing value.
    expect(html.replace(/<script>[\s\S]*?<\/script>/, '')).not.toMatch(/undefined|NaN/);
  });

  it('runs a value listed twice once, in the order first given', () => {
    expect(parseVary('k=2,2,3')).toEqual({ parameter: 'k', values: [2, 3] });
    expect(parseVary('k=5,2,5.0,2')).toEqual({ parameter: 'k', values: [5, 2] });
    const data = explore(spec, table, [parseVary('k=3,3,4')], {
      specPath: 'release.json',
      kernel: wasmGroupingKernel,
      lattice: false,
    });
    expect(data.frontier.points.map((p) => p.values)).toEqual([{ k: 3 }, { k: 4 }]);
  });

  it('varies maxSuppression for generalization only', () => {
    expect(specWith(spec, 'maxSuppression', 0.1).method).toMatchObject({ maxSuppression: 0.1 });
    expect(() => specWith({ ...spec, method: { name: 'anatomy' } }, 'maxSuppression', 0.1)).toThrow(
      /a setting of generalization/,
    );
    expect(() => parseVary('maxSuppression=0..2')).toThrow(/in \[0, 1\]/);
  });
});

describe('explore() of Mondrian', () => {
  it('has the frontier and released rows from its build, no lattice', () => {
    const ws = adultWorkspace(600);
    ws.editSpec((s) => {
      s['method'] = { name: 'mondrian', mode: 'strict', measures: false };
    });
    const spec = loadSpec(ws.spec);
    const data = explore(spec, readInput(spec), [parseVary('k=5,10')], {
      specPath: 'release.json',
      kernel: wasmGroupingKernel,
    });
    expect(data.lattice).toBeUndefined();
    const c = data.choices[data.points[0]!.choice]!;
    expect(c.k).toBeGreaterThanOrEqual(5);
    // The spec's own k (5) is in the sweep: its solution's rows are the page's one preview.
    expect(data.preview!.choice).toBe(data.points[0]!.choice);
    expect(c.preview).toBe(true);
    expect(data.choices[data.points[1]!.choice]!.preview).toBeUndefined();
    expect(data.preview!.rows).toHaveLength(50);
    expect(data.preview!.columns).toContain('occupation');
    expect(explorerHtml(data)).not.toContain('id="lattice"');
  });
});

describe('--serve', () => {
  /** A raw GET with the Host header given (fetch would not send another). */
  function get(url: string, host: string): Promise<{ status: number; body: string; csp?: string }> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { host } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            body,
            ...(res.headers['content-security-policy']
              ? { csp: String(res.headers['content-security-policy']) }
              : {}),
          }),
        );
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('serves the page on 127.0.0.1 only, to requests for 127.0.0.1 or localhost, with its CSP', async () => {
    let server: Server | undefined;
    const url = await serveExplorer('<!doctype html><p>page</p>', (s) => {
      server = s;
    });
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const port = (server!.address() as { address: string; port: number }).port;
      expect((server!.address() as { address: string }).address).toBe('127.0.0.1');
      const page = await fetch(url);
      expect(await page.text()).toBe('<!doctype html><p>page</p>');
      expect(page.headers.get('content-security-policy')).toBe(`${explorerCsp()}; frame-ancestors 'none'`);
      expect((await fetch(`${url}data.csv`)).status).toBe(404);
      expect((await get(url, `localhost:${port}`)).status).toBe(200);
      expect((await get(url, `127.0.0.1:${port}`)).status).toBe(200);
      // DNS rebinding: a name the attacker points at 127.0.0.1 reaches the server, and is refused.
      for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${port + 1}`, 'localhost']) {
        const refused = await get(url, host);
        expect(refused.status, host).toBe(421);
        expect(refused.body).toMatch(/^refused: this server answers only requests for 127\.0\.0\.1:\d+/);
        expect(refused.body).not.toContain('page');
      }
    } finally {
      server!.close();
    }
  });

  it('allows exactly 127.0.0.1 and localhost at its port', () => {
    expect(allowedHost('127.0.0.1:8080', 8080)).toBe(true);
    expect(allowedHost('LOCALHOST:8080', 8080)).toBe(true);
    expect(allowedHost(undefined, 8080)).toBe(false);
    expect(allowedHost('127.0.0.1.evil.example:8080', 8080)).toBe(false);
    expect(allowedHost('[::1]:8080', 8080)).toBe(false);
  });
});

describe('ppdp apply --node', () => {
  it('refuses a node that does not name every quasi-identifier once, writing nothing', async () => {
    const ws = adultWorkspace(10);
    const out = join(ws.dir, 'out');
    await expect(applyCommand(['--node', 'sex=0,age=1', ws.spec, '--out', out])).rejects.toThrow(
      /no level for race, marital-status, education, native-country, workclass, salary-class/,
    );
    await expect(applyCommand(['--node', 'sex=0,height=1', ws.spec, '--out', out])).rejects.toThrow(
      /'height=1' is not <quasi-identifier>=<level>/,
    );
    await expect(applyCommand(['--node', 'sex=0', 'a', 'b', '--out', out])).rejects.toThrow(
      /one release spec/,
    );
    expect(existsSync(out)).toBe(false);
  });
});
