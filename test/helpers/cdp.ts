/**
 * Headless Chromium driven over the DevTools protocol (`--remote-debugging-pipe`: JSON
 * messages ended by NUL on file descriptors 3 and 4, no port, no dependency). A page is
 * opened with a listener for `securitypolicyviolation` installed before any of its scripts
 * (protocol scripts are not bound by the page's CSP), and every console message, uncaught
 * exception and log entry (where Chromium reports CSP refusals) is collected.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** What a page reported: console messages and log entries at level error or warning, exceptions. */
export interface PageProblem {
  readonly kind: 'console' | 'exception' | 'log';
  readonly level: string;
  readonly text: string;
}

export interface CdpPage {
  /** Evaluates an expression in the page (promises awaited) and returns its value. */
  evaluate<T>(expression: string): Promise<T>;
  /** Console errors and warnings, exceptions, and error or warning log entries so far. */
  problems(): PageProblem[];
  /** The CSP violations the page's `securitypolicyviolation` listener saw so far. */
  violations(): Promise<{ directive: string; blocked: string; sample: string }[]>;
  close(): Promise<void>;
}

type Message = { id?: number; method?: string; params?: Record<string, unknown>; sessionId?: string } & {
  result?: Record<string, unknown>;
  error?: { message: string };
};

const LISTENER = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
});`;

/** Opens `url` in a fresh headless Chromium and waits for its load event. */
export async function openPage(chromium: string, url: string): Promise<CdpPage> {
  const profile = mkdtempSync(join(tmpdir(), 'ppdp-cdp-'));
  const child: ChildProcess = spawn(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--window-size=1280,2000',
      `--user-data-dir=${profile}`,
      '--remote-debugging-pipe',
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
  );
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let next = 0;
  const waiting = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  const listeners: ((m: Message) => void)[] = [];
  const problems: PageProblem[] = [];
  let buffer = '';
  fromBrowser.setEncoding('utf8');
  fromBrowser.on('data', (chunk: string) => {
    buffer += chunk;
    let end = buffer.indexOf('\0');
    while (end >= 0) {
      const m = JSON.parse(buffer.slice(0, end)) as Message;
      buffer = buffer.slice(end + 1);
      end = buffer.indexOf('\0');
      if (m.id !== undefined) {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.error) w?.reject(new Error(m.error.message));
        else w?.resolve(m);
      } else for (const l of listeners) l(m);
    }
  });
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<Message>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });

  const targets = await send('Target.getTargets');
  const page = (targets.result!['targetInfos'] as { targetId: string; type: string }[]).find(
    (t) => t.type === 'page',
  )!;
  const attached = await send('Target.attachToTarget', { targetId: page.targetId, flatten: true });
  const session = attached.result!['sessionId'] as string;
  listeners.push((m) => {
    if (m.sessionId !== session) return;
    const p = m.params ?? {};
    if (
      m.method === 'Runtime.consoleAPICalled' &&
      ['error', 'warning', 'assert'].includes(p['type'] as string)
    ) {
      const args = (p['args'] as { value?: unknown; description?: string }[]).map((a) =>
        String(a.value ?? a.description ?? ''),
      );
      problems.push({ kind: 'console', level: p['type'] as string, text: args.join(' ') });
    } else if (m.method === 'Runtime.exceptionThrown') {
      const d = p['exceptionDetails'] as { text: string; exception?: { description?: string } };
      problems.push({ kind: 'exception', level: 'error', text: d.exception?.description ?? d.text });
    } else if (m.method === 'Log.entryAdded') {
      const e = p['entry'] as { level: string; text: string; url?: string };
      if (e.level === 'error' || e.level === 'warning')
        problems.push({ kind: 'log', level: e.level, text: `${e.text}${e.url ? ` (${e.url})` : ''}` });
    }
  });
  const call = (method: string, params: Record<string, unknown> = {}) => send(method, params, session);
  await call('Page.enable');
  await call('Runtime.enable');
  await call('Log.enable');
  await call('Page.addScriptToEvaluateOnNewDocument', { source: LISTENER });
  const loaded = new Promise<void>((resolve) =>
    listeners.push((m) => {
      if (m.sessionId === session && m.method === 'Page.loadEventFired') resolve();
    }),
  );
  const nav = await call('Page.navigate', { url });
  if (nav.result?.['errorText']) throw new Error(`navigation failed: ${nav.result['errorText']}`);
  await loaded;

  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = await call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    const details = r.result!['exceptionDetails'] as { text: string; exception?: { description?: string } };
    if (details) throw new Error(`in the page: ${details.exception?.description ?? details.text}`);
    return (r.result!['result'] as { value: T }).value;
  };
  return {
    evaluate,
    problems: () => [...problems],
    violations: () => evaluate('window.__violations'),
    async close() {
      await send('Browser.close').catch(() => {});
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) resolve();
        else child.once('exit', () => resolve());
      });
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
