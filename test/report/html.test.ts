import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type HistogramBin, REPORT_FORMAT, type ReleaseReport } from '../../src/contracts/report.ts';
import { reidentificationRisk } from '../../src/metrics/privacy.ts';
import { cautionLines, verdictOf } from '../../src/report/audit.ts';
import { esc, showBidi } from '../../src/report/format.ts';
import { renderReportHtml } from '../../src/report/html.ts';

/** A generalization report: every part that is optional for other methods is present. */
type FullReport = ReleaseReport & {
  generalization: NonNullable<ReleaseReport['generalization']>;
  privacy: ReleaseReport['privacy'] & { ecSizeHistogram: HistogramBin[] };
};

/** A report shaped like a k=5 release of the Adult example (30,162 rows, 8 QIs). */
function sampleReport(): FullReport {
  return {
    format: REPORT_FORMAT,
    ppdp: { version: '0.1.0', runId: 'run-2f9c1a' },
    spec: {
      file: 'examples/adult/release.json',
      method: 'generalization',
      seed: 1,
      maxSuppression: 0.02,
      suppressed: 'mask',
    },
    input: {
      file: 'adult.csv',
      columns: [
        { name: 'sex', type: 'string', distinct: 2 },
        { name: 'age', type: 'integer', distinct: 72 },
        { name: 'race', type: 'string', distinct: 5 },
        { name: 'marital-status', type: 'string', distinct: 7 },
        { name: 'education', type: 'string', distinct: 16 },
        { name: 'native-country', type: 'string', distinct: 41 },
        { name: 'workclass', type: 'string', distinct: 7 },
        { name: 'occupation', type: 'string', distinct: 14 },
        { name: 'salary-class', type: 'string', distinct: 2 },
      ],
    },
    rows: { input: 30162, released: 30162, suppressed: 412 },
    generalization: {
      strategy: 'flash',
      node: {
        sex: 0,
        age: 2,
        race: 1,
        'marital-status': 1,
        education: 2,
        'native-country': 1,
        workclass: 1,
        'salary-class': 0,
      },
      heights: {
        sex: 1,
        age: 4,
        race: 1,
        'marital-status': 2,
        education: 3,
        'native-country': 2,
        workclass: 2,
        'salary-class': 1,
      },
      latticeSize: 4320,
      nodesChecked: 187,
      distinctTuples: 21648,
      ncpByAttribute: { sex: 0, age: 0.61, race: 0.4, 'marital-status': 0.5 },
    },
    privacy: {
      satisfied: true,
      models: [
        { model: 'k-anonymity', params: { k: 5 }, satisfied: true, achieved: { k: 5 }, monotonic: true },
        {
          model: 'distinct-l-diversity',
          params: { l: 2, attribute: 'occupation' },
          satisfied: true,
          achieved: { l: 3 },
          monotonic: true,
        },
      ],
      k: 5,
      classes: 1043,
      ecSizeHistogram: [
        { label: '5', from: 5, to: 5, classes: 121, rows: 605 },
        { label: '6–10', from: 6, to: 10, classes: 298, rows: 2311 },
        { label: '11–20', from: 11, to: 20, classes: 251, rows: 3702 },
        { label: '21–50', from: 21, to: 50, classes: 206, rows: 6630 },
        { label: '51–100', from: 51, to: 100, classes: 97, rows: 6841 },
        { label: '101+', from: 101, to: null, classes: 70, rows: 9661 },
      ],
      prosecutorRisk: { max: 0.2, mean: 0.034567891, threshold: 0.1, shareAbove: 0.0954 },
      reidentification: reidentificationRisk(
        [5, 5, 7, 12, 40, 120],
        0.1,
        'the generalized quasi-identifiers',
      ),
      sensitive: [
        {
          attribute: 'occupation',
          overall: [0.5, 0.45, 0.05],
          worstClass: [0.8, 0.2, 0],
          worstClassSize: 5,
        },
      ],
    },
    utility: {
      metric: 'ncp',
      value: 0.41236789,
      ncp: 0.41236789,
      discernibility: 1234567890,
      precision: 0.5123,
      aecs: 5.784276,
      entropy: 98765.4321,
    },
    verification: {
      verified: true,
      checks: [
        { name: 'k-anonymity', passed: true, detail: 'smallest retained class has 5 rows (required 5)' },
        { name: 'suppression-limit', passed: true, detail: '412 rows suppressed (1.366%), limit 2%' },
        { name: 'row-count', passed: true, detail: '30,162 rows released' },
      ],
    },
    timings: { load: 182.4, hierarchies: 12.1, search: 1504.77, transform: 95.3, verify: 61 },
  };
}

const SECTIONS = [
  'Guarantees',
  'Re-identification risk',
  'Attribute disclosure',
  'Information loss per attribute',
  'Transformation',
  'Equivalence class sizes',
  'Utility',
  'Verification',
  'Timings',
];

/** Charts (legend swatches are small SVGs too, not counted). */
const countSvgs = (html: string) => html.split('<svg class="chart"').length - 1;

describe('renderReportHtml', () => {
  it('renders a complete HTML5 page with every section', () => {
    const html = renderReportHtml(sampleReport());
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('ppdp release report');
    expect(html).toContain('adult.csv');
    expect(html).toContain('run-2f9c1a');
    for (const title of SECTIONS) expect(html).toContain(`<h2>${title}</h2>`);
    expect(html).toContain('Identifying columns were dropped');
  });

  it('shows the green verdict for a verified release', () => {
    const html = renderReportHtml(sampleReport());
    expect(html).toContain('Verified: every privacy guarantee holds');
    expect(html).not.toContain('NOT verified');
  });

  it('shows the amber verdict with each cause of the audit, and names the columns released unchanged', () => {
    const report = sampleReport();
    const audit: NonNullable<ReleaseReport['audit']> = {
      unchanged: ['occupation', 'hours <&>'],
      measured: true,
      thresholds: { keepsNothingNcp: 0.9, uniqueRowsAllowed: 0, revealShare: 0.9 },
      cautions: [{ cause: 'keeps-nothing', message: 'the release keeps almost nothing: <one class>' }],
    };
    const html = renderReportHtml({ ...report, audit });
    expect(html).toContain('<div class="verdict warn"');
    expect(html).toContain('Verified, with cautions');
    expect(html).toContain('<li>the release keeps almost nothing: &lt;one class&gt;</li>');
    expect(html).toContain(
      '<strong>Released unchanged:</strong> <code>occupation</code>, <code>hours &lt;&amp;&gt;</code>',
    );
    expect(html).not.toContain('every privacy guarantee holds');
    // An audit without causes keeps the green verdict, and still names the unchanged columns.
    const green = renderReportHtml({ ...report, audit: { ...audit, cautions: [] } });
    expect(green).toContain('Verified: every privacy guarantee holds');
    expect(green).toContain('<strong>Released unchanged:</strong>');
  });

  it('shows the red verdict when a check fails or a model is unsatisfied', () => {
    const failedCheck = sampleReport();
    failedCheck.verification.verified = false;
    failedCheck.verification.checks[0].passed = false;
    const unsatisfied = sampleReport();
    unsatisfied.privacy.satisfied = false;
    unsatisfied.privacy.models[1].satisfied = false;
    for (const report of [failedCheck, unsatisfied]) {
      const html = renderReportHtml(report);
      expect(html).toContain('NOT verified');
      expect(html).not.toContain('Verified: every privacy guarantee holds');
    }
    expect(renderReportHtml(failedCheck)).toContain('1 of 3 verification checks failed');
    expect(renderReportHtml(unsatisfied)).toContain('privacy model not satisfied: distinct-l-diversity');
  });

  it('draws one SVG per chart, each with labelled axes, ticks and data marks', () => {
    const html = renderReportHtml(sampleReport());
    // risk histogram, sensitive distribution, class sizes, NCP per QI, timings
    expect(countSvgs(html)).toBe(5);
    for (const svg of html.split('<svg class="chart"').slice(1)) {
      expect(svg.match(/class="axis-label"/g)).toHaveLength(2);
      expect(svg.match(/class="tick"/g)!.length).toBeGreaterThanOrEqual(3);
      expect(svg).toContain('class="mark"');
    }
  });

  it('shows the re-identification risk at the threshold, with journalist and marketer risk', () => {
    const html = renderReportHtml(sampleReport());
    expect(html).toContain('<th scope="row">Risk threshold</th><td>0.1 (1 in 10)</td>');
    // rows with risk above 0.1: the classes of 5 and 7 rows, 17 of 189 rows
    expect(html).toContain('<th scope="row">Rows above the threshold</th><td><strong>8.995%</strong></td>');
    expect(html).toContain('journalist risk equals prosecutor risk');
    expect(html).toContain('Marketer risk');
    expect(html).toContain('risk above the threshold 0.1');
  });

  it('shows the sensitive distribution overall and in the class that reveals most', () => {
    const html = renderReportHtml(sampleReport());
    expect(html).toContain('class that reveals most (5 rows)');
    // Values are numbered, never named: the report holds aggregates only.
    expect(html).toContain('<title>class that reveals most (5 rows), #1: 80%</title>');
  });

  it('formats numbers readably', () => {
    const html = renderReportHtml(sampleReport());
    expect(html).toContain('30,162');
    expect(html).toContain('1,234,567,890');
    expect(html).toContain('0.4124');
    expect(html).toContain('4.329%'); // 187 of 4,320 lattice nodes
    expect(html).toContain('98,765');
  });

  it('rounds the numbers of passed checks for people, and keeps a failed check exact', () => {
    const report = sampleReport();
    report.verification.checks = [
      {
        name: 'reported-ncp',
        passed: true,
        detail: 'NCP recomputed 0.29047161077443123, reported 0.2904716107744313',
      },
      { name: 'row-count', passed: true, detail: '30162 rows released of 30162 in part-00012.csv' },
      { name: 'reported-loss', passed: false, detail: 'Loss recomputed 0.24647715530217207, reported 0.25' },
    ];
    const html = renderReportHtml(report);
    expect(html).toContain('NCP recomputed 0.2905, reported 0.2905');
    expect(html).not.toContain('0.29047161077443123');
    expect(html).toContain('30,162 rows released of 30,162 in part-00012.csv');
    expect(html).toContain('Loss recomputed 0.24647715530217207, reported 0.25');
    expect(html).toContain('<code>report.json</code> holds them exactly');
  });

  it('counts distinct combinations of the quasi-identifiers', () => {
    expect(renderReportHtml(sampleReport())).toContain('Distinct QI combinations');
  });

  it('names the Loss measure and what its scale means', () => {
    const report = sampleReport();
    report.utility = { ...report.utility, loss: 0.2464771553 };
    const html = renderReportHtml(report);
    expect(html).toContain('Loss (as in ARX)');
    expect(html).toContain('0.2465');
  });

  it('escapes strings from the report', () => {
    const evil = '<script>alert(1)</script>';
    const report = sampleReport();
    report.generalization.node = { [evil]: 1, ...report.generalization.node };
    report.generalization.heights = { [evil]: 2, ...report.generalization.heights };
    report.input.file = `"><img src=x onerror=alert(1)>.csv`;
    report.verification.checks[0].detail = evil;
    report.privacy.ecSizeHistogram[0].label = evil;
    report.timings = { [evil]: 3, ...report.timings };
    const html = renderReportHtml(report);
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;.csv');
  });

  it('shows bidi controls in names and values escaped, never raw', () => {
    // U+202E (right-to-left override) would show 'txt.exe' as 'exe.txt', and so on.
    const controls = [
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200E',
      '\u200F',
      '\u061C',
    ];
    const report = sampleReport();
    report.input.file = `invoice\u202Etxt.exe`;
    report.generalization.node = { [`a${controls.join('')}b`]: 1, ...report.generalization.node };
    report.verification.checks[0]!.detail = 'column \u2067age\u2069 checked';
    const html = renderReportHtml(report);
    expect(html).not.toMatch(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
    expect(html).toContain('invoice&lt;U+202E&gt;txt.exe');
    expect(html).toContain(
      'a&lt;U+202A&gt;&lt;U+202B&gt;&lt;U+202C&gt;&lt;U+202D&gt;&lt;U+202E&gt;&lt;U+2066&gt;&lt;U+2067&gt;&lt;U+2068&gt;&lt;U+2069&gt;&lt;U+200E&gt;&lt;U+200F&gt;&lt;U+061C&gt;b',
    );
    expect(html).toContain('column &lt;U+2067&gt;age&lt;U+2069&gt; checked');
    expect(showBidi('a\u202Eb')).toBe('a<U+202E>b');
    expect(esc('\u200Fx<')).toBe('&lt;U+200F&gt;x&lt;');
    // Other right-to-left text is left as it is.
    expect(esc('שלום')).toBe('שלום');
    // The CLI's caution lines too.
    expect(
      cautionLines({ verdict: { level: 'amber', causes: ['column o\u202Ec is unchanged'] } } as never),
    ).toBe('  caution: column o<U+202E>c is unchanged\n');
  });

  it('has a Content-Security-Policy: no script, its own stylesheet by hash, no style attribute', () => {
    const html = renderReportHtml(sampleReport());
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(csp).toBe(
      `default-src 'none'; script-src 'none'; style-src 'sha256-${hash}'; img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'`,
    );
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    expect(html).toContain('<svg class="swatch"');
  });

  it('is self-contained', () => {
    const html = renderReportHtml(sampleReport());
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(|https?:\/\//i);
  });

  it('is deterministic', () => {
    expect(renderReportHtml(sampleReport())).toBe(renderReportHtml(sampleReport()));
  });

  it('handles an empty histogram and empty timings', () => {
    const report = sampleReport();
    const full = countSvgs(renderReportHtml(report));
    report.privacy.ecSizeHistogram = [];
    const html = renderReportHtml(report);
    expect(html).toContain('<h2>Equivalence class sizes</h2>');
    expect(html).toContain('No equivalence classes were retained.');
    expect(countSvgs(html)).toBe(full - 1);
    report.timings = {};
    expect(renderReportHtml(report)).toContain('No timings were recorded.');
  });

  it('renders k-minimal nodes as a table with the chosen node highlighted', () => {
    const report = sampleReport();
    const chosen = report.generalization.node;
    report.generalization.strategy = 'k-minimal';
    report.generalization.kMinimal = [{ ...chosen, age: 1, education: 3 }, { ...chosen }];
    const html = renderReportHtml(report);
    expect(html).toContain('k-minimal nodes (2)');
    expect(html).toMatch(/<tr class="chosen"><td>2 <span class="badge">chosen<\/span><\/td>/);
    expect(countSvgs(html)).toBe(countSvgs(renderReportHtml(sampleReport())));
  });

  it('renders attribute disclosure measures with their meanings against the trivial releases', () => {
    const report = sampleReport();
    const measures = {
      distinctL: 2,
      entropyL: 1.65,
      t: 0.3456789,
      delta: 5.7,
      knowledgeGain: 0.1,
      accuracyGain: 0.16,
    };
    const trivial = { t: 0, delta: 0, knowledgeGain: 0, accuracyGain: 0 };
    report.privacy.disclosure = {
      occupation: {
        attribute: 'occupation',
        release: measures,
        qisWithheld: { distinctL: 14, entropyL: 10.5, ...trivial },
        saWithheld: { distinctL: null, entropyL: null, ...trivial },
        accuracy: { release: 0.29, qisWithheld: 0.13, saWithheld: 0.07, original: 0.6 },
        note: '<b>natural logarithms</b>',
      },
    };
    const html = renderReportHtml(report);
    expect(html).toContain('<h2>Attribute disclosure</h2>');
    expect(html).toContain(
      '<td>t (equal distance)</td><td class="num">0.3457</td><td class="num">0</td><td class="num">0</td>',
    );
    expect(html).toContain('Largest distance between a class’s sensitive distribution and the overall one');
    expect(html).toContain(
      '<th scope="row">Accuracy of guessing the value from the original data</th><td>60%</td>',
    );
    expect(html).toContain('&lt;b&gt;natural logarithms&lt;/b&gt;');
    // No raw keys of report.json.
    for (const key of ['distinctL', 'knowledgeGain', 'qisWithheld', 'saWithheld'])
      expect(html).not.toContain(key);
  });
});

/** A report shaped like a randomization release: none of the generalization-only parts. */
function minimalReport(): ReleaseReport {
  return {
    format: REPORT_FORMAT,
    ppdp: { version: '0.1.0', runId: 'run-7b3e0d' },
    spec: { file: 'examples/adult/randomize.json', method: 'randomization', seed: 7 },
    input: { file: 'adult.csv', columns: [{ name: 'occupation', type: 'string', distinct: 14 }] },
    rows: { input: 30162, released: 30162, suppressed: 0 },
    privacy: { satisfied: true, models: [] },
    utility: { metric: 'kl', value: 0.0123456, kl: 0.0123456, chi2: 41.5, flavour: 'retention' },
    sections: [
      {
        title: 'Randomized response',
        facts: [
          ['Retention probability', 0.8],
          ['Attribute', 'occupation'],
        ],
        note: 'Each value is kept with probability p, otherwise replaced by a uniformly random value.',
      },
      {
        title: 'Buckets <per attribute>',
        facts: [['Buckets', 1200]],
        chart: {
          title: 'Rows per bucket',
          x: 'bucket',
          y: 'rows',
          bars: [
            { label: 'b1', value: 10 },
            { label: '<b2>', value: 25 },
            { label: 'b3', value: 7 },
          ],
        },
      },
    ],
    verification: { verified: true, checks: [{ name: 'row-count', passed: true, detail: '30,162 rows' }] },
    timings: { load: 10, randomize: 20 },
  };
}

describe('renderReportHtml for methods other than generalization', () => {
  it('leaves out every absent part without printing undefined or NaN', () => {
    const html = renderReportHtml(minimalReport());
    expect(html).not.toMatch(/undefined|NaN/);
    expect(html).not.toContain('<h2>Transformation</h2>');
    expect(html).not.toContain('<h2>Equivalence class sizes</h2>');
    expect(html).not.toContain('Prosecutor risk');
    expect(html).not.toContain('k achieved');
    expect(html).not.toContain('Equivalence classes');
    expect(html).not.toContain('Suppression handling');
    expect(html).not.toContain('; limit');
    expect(html).not.toContain('Attribute disclosure');
    expect(html).not.toContain('NCP');
    expect(html).not.toContain('Precision loss');
    expect(html).toContain('No privacy models were specified.');
    // Row counts still have a home without the transformation section.
    expect(html).toContain('<h2>Rows</h2>');
    expect(html).toContain('0 (0% of input)');
  });

  it('lists every numeric utility measure with its meaning', () => {
    const html = renderReportHtml(minimalReport());
    expect(html).toContain(
      'Optimized metric: <strong>KL divergence</strong> <span class="big">0.01235</span>',
    );
    expect(html).toContain('KL divergence <span class="badge">headline</span>');
    // Each distribution measure says what 0 is and which way is worse, and its unit.
    expect(html).toContain('in nats: 0 = identical; higher = further apart');
    expect(html).toContain('summed over cells: 0 = identical; higher = further apart');
    expect(html).toContain('χ² distance');
    expect(html).toContain('41.5');
    expect(html).not.toContain('retention</td>');

    const report = minimalReport();
    report.utility = {
      metric: 'queryErrorCube',
      value: 0.2,
      queryErrorBase: 0.1,
      queryErrorCube: 0.2,
      zeta: 3,
    };
    const other = renderReportHtml(report);
    expect(other).toContain('Query error (all attributes)');
    expect(other).toContain('Query error (every subset) <span class="badge">headline</span>');
    expect(other).toContain('Average relative error of count queries');
    expect(other).toContain('0 = exact; 0.1 = off by 10 % on average');
    expect(other).toContain('<td>zeta</td>');
    expect(other).toContain('Method-specific utility measure');
  });

  it('renders each custom section with its facts, note and chart, escaped', () => {
    const html = renderReportHtml(minimalReport());
    expect(html).toContain('<section id="method-1">\n<h2>Randomized response</h2>');
    expect(html).toContain('<section id="method-2">\n<h2>Buckets &lt;per attribute&gt;</h2>');
    expect(html).toContain('<th scope="row">Retention probability</th><td>0.8</td>');
    expect(html).toContain('<th scope="row">Buckets</th><td>1,200</td>');
    expect(html).toContain('Each value is kept with probability p');
    expect(html).toContain('<figcaption>Rows per bucket</figcaption>');
    expect(html).toContain('&lt;b2&gt;');
    expect(html).not.toContain('<b2>');
    expect(html).not.toContain('<per attribute>');
    // The section chart and the timings bar; no gauges, no histogram, no level bars.
    expect(countSvgs(html)).toBe(2);
    // Custom sections sit before Utility.
    expect(html.indexOf('id="method-2"')).toBeLessThan(html.indexOf('id="utility"'));
  });

  it('shows suppression lines only for what the spec states', () => {
    const report = minimalReport();
    report.spec.maxSuppression = 0.05;
    const html = renderReportHtml(report);
    expect(html).toContain('limit 5%');
    expect(html).not.toContain('Suppression handling');
    report.spec.suppressed = 'remove';
    expect(renderReportHtml(report)).toContain('Suppression handling');
  });

  it('leaves the machine-readable details to report.json', () => {
    const report = minimalReport();
    report.details = { randomization: { buckets: [{ id: 1, note: '<script>x</script>' }], p: 0.8 } };
    const html = renderReportHtml(report);
    expect(html).not.toContain('<details>');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('buckets');
  });

  it('says "headline", not "optimized", for methods that optimize nothing, and names their buckets', () => {
    const report = minimalReport();
    report.spec.method = 'anatomy';
    report.utility = { metric: 'kl-divergence', value: 0.9, kl: 0.9 };
    report.privacy.ecSizeHistogram = [{ label: '4', from: 4, to: 4, classes: 10, rows: 40 }];
    const html = renderReportHtml(report);
    expect(html).toContain('Headline measure: <strong>KL divergence</strong>');
    expect(html).not.toContain('Optimized');
    expect(html).toContain('<h2>Bucket sizes</h2>');
  });

  it('shows an amber verdict and what the method does not protect for methods that publish exact quasi-identifiers', () => {
    for (const method of ['anatomy', 'slicing', 'randomization']) {
      const report = minimalReport();
      report.spec.method = method;
      const html = renderReportHtml(report);
      expect(html).toContain('<div class="verdict warn"');
      expect(html).toContain('Verified, but identity disclosure is not prevented');
      expect(html).toContain('Does not protect against:');
      expect(html).toMatch(/Identity (and membership )?disclosure/);
      expect(html).not.toContain('every privacy guarantee holds');
      // report.json states the same verdict.
      expect(verdictOf(report)).toEqual({
        level: 'caution',
        causes: [
          `identity disclosure is not prevented: ${method} leaves rows linkable on the values it publishes exactly`,
        ],
      });
    }
    expect(verdictOf(sampleReport())).toEqual({ level: 'verified', causes: [] });
    const generalization = renderReportHtml(sampleReport());
    expect(generalization).toContain('<div class="verdict pass"');
    expect(generalization).toContain('Does not protect against:');
  });

  it('takes the total time from the report, never summing nested phases', () => {
    const report = minimalReport();
    report.timings = { build: 900, optimize: 700, verify: 100, plan: 2, total: 1002 };
    const html = renderReportHtml(report);
    expect(html).toContain('<strong>1,002 ms</strong>');
    expect(html).not.toContain('1,704');
    expect(html).not.toContain('2,704');
  });

  it('cites nothing outside the repository', () => {
    for (const html of [renderReportHtml(sampleReport()), renderReportHtml(minimalReport())]) {
      expect(html).not.toMatch(/seed 0\d\d|SPEC|§|issue \d/);
    }
  });

  it('renders partial privacy facts when only some are present', () => {
    const report = minimalReport();
    report.privacy.k = 4;
    report.privacy.classes = 12;
    const html = renderReportHtml(report);
    expect(html).toContain('k achieved (smallest class)');
    expect(html).toContain('<th scope="row">Equivalence classes</th><td>12</td>');
    expect(html).not.toContain('Prosecutor risk');
    expect(html).not.toMatch(/undefined|NaN/);
  });
});
