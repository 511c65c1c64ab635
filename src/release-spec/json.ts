/**
 * Checks on a spec's raw JSON text that `JSON.parse` cannot make: a key given twice in one
 * object is silently reduced to its last value, so `"age"` listed twice under `attributes`
 * (say once as quasi-identifying, once as insensitive) would lose one of the settings unnoticed.
 * And the file's size, before it is read.
 */
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { LimitError, PpdpError, SpecError } from '../errors.ts';
import { MAX_SPEC_BYTES } from '../util/limits.ts';
import { fileMagic } from '../util/magic.ts';

/**
 * Fails before a spec file over MAX_SPEC_BYTES is read (a spec holds settings: kilobytes, or a
 * few megabytes of distortion matrices). A file that cannot be stat'ed passes: reading it names
 * the problem.
 * @throws LimitError E_LIMIT_SPEC.
 */
export function checkSpecSize(file: string): void {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return;
  }
  if (size > MAX_SPEC_BYTES) {
    const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
    throw new LimitError(
      'E_LIMIT_SPEC',
      `${basename(file)}: the spec file is ${mib(size)} MiB, over the limit of ${MAX_SPEC_BYTES / (1024 * 1024)} MiB`,
      'a spec holds settings, not data: keep hierarchies and matrices in files it names, and check that this is the right file',
    );
  }
}

/**
 * What kind of table `file` looks like when it is one rather than a spec, or undefined: its
 * first bytes name a table format (inputMagic: Arrow, Parquet, gzip, ZIP as an Excel workbook
 * is), or, given its `text`, its first line reads like a CSV row (no JSON opening bracket, and a
 * comma, semicolon, tab or bar, and no `"name":`). Said so a person who swapped a command's arguments is told so,
 * not shown a JSON error about their data.
 */
export function tableLike(file: string, text?: string): string | undefined {
  const magic = fileMagic(file);
  if (magic !== undefined) {
    return {
      arrow: 'an Arrow file',
      parquet: 'a Parquet file',
      gzip: 'a gzip file',
      zip: 'a ZIP archive or Excel workbook',
    }[magic];
  }
  if (text === undefined) return undefined;
  const first = text.trimStart().split('\n', 1)[0] ?? '';
  // `"seed": 1,` (a spec missing its opening brace) is JSON gone wrong, not a table.
  return !/^[{[]/.test(first) && !/":/.test(first) && /[,;\t|]/.test(first) ? 'a CSV file' : undefined;
}

/**
 * Whether a file's first text (`head`) reads like a release spec rather than a table: a JSON
 * object, `{` and then a `"key":` (or `}`). The reverse of tableLike, for a command that reads a
 * table and was given the spec in its place.
 */
export function specLike(head: string): boolean {
  return /^\uFEFF?\s*\{\s*(?:"[^"\n]*"\s*:|\})/.test(head);
}

/**
 * The error for a command given one kind of file where it expects another (`looksLike`, e.g.
 * "a table (a CSV file)"; `expected`, e.g. "a release spec"): its arguments were likely
 * swapped. Nothing of the file is quoted.
 */
export function swappedArguments(file: string, looksLike: string, expected: string, hint: string): SpecError {
  return new SpecError(
    'E_SPEC_JSON',
    `${basename(file)}: this looks like ${looksLike}, not ${expected} — were the arguments swapped?`,
    hint,
  );
}

export interface DuplicateKey {
  /** Dotted path of the repeated key, e.g. `attributes.age` or `privacy[1].k`. */
  readonly path: string;
  /** 1-based lines of the first and the repeated occurrence. */
  readonly firstLine: number;
  readonly line: number;
}

interface Frame {
  readonly kind: 'object' | 'array';
  readonly path: string;
  /** Object keys seen so far, with the line of each. */
  readonly keys: Map<string, number>;
  /** Array: index of the next element. */
  index: number;
  /** Object: the key whose value comes next. */
  key: string | undefined;
}

/**
 * The first key repeated within one object of `text`, or undefined. `text` must be valid JSON
 * (call after `JSON.parse` succeeded): the scanner relies on it and does not report syntax.
 */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  /** The path of the value that starts now, given the enclosing container. */
  const valuePath = (): string => {
    const top = stack.at(-1);
    if (top === undefined) return '';
    if (top.kind === 'array') return `${top.path}[${top.index}]`;
    const key = top.key ?? '';
    const plain = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : JSON.stringify(key);
    return top.path === '' ? plain : `${top.path}.${plain}`;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) {
      line++;
      i++;
    } else if (c === 0x7b || c === 0x5b) {
      // { or [
      stack.push({
        kind: c === 0x7b ? 'object' : 'array',
        path: valuePath(),
        keys: new Map(),
        index: 0,
        key: undefined,
      });
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      i++;
    } else if (c === 0x2c) {
      // , ends an element
      const top = stack.at(-1);
      if (top?.kind === 'array') top.index++;
      else if (top) top.key = undefined;
      i++;
    } else if (c === 0x22) {
      // a string: a key if it is in key position of an object
      let j = i + 1;
      while (j < n && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      const top = stack.at(-1);
      if (top?.kind === 'object' && top.key === undefined) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        const first = top.keys.get(key);
        if (first !== undefined) {
          top.key = key;
          return { path: valuePath(), firstLine: first, line };
        }
        top.keys.set(key, line);
        top.key = key;
      }
      i = j + 1;
    } else {
      i++;
    }
  }
  return undefined;
}

export interface JsonSyntax {
  /** 1-based line and column of the first character JSON cannot accept. */
  readonly line: number;
  readonly column: number;
  /** What JSON expected there, in words that quote nothing of the file. */
  readonly problem: string;
  /** The likely fix. */
  readonly hint: string;
}

/**
 * `text`, the file `path`, parsed as JSON; when it is not JSON, a PpdpError `code` naming the
 * file, the line and the column (located, never quoted: a release's files hold values of the
 * input), with `hint`.
 */
export function parseJsonFile(text: string, path: string, code: string, hint: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const at = locateJsonError(text);
    throw new PpdpError(
      code,
      `${path} line ${at.line}, column ${at.column}: not valid JSON (${at.problem})`,
      hint,
    );
  }
}

/**
 * Where and why `text` is not JSON, for an error a person can act on: V8's messages give a
 * character offset at best (none for "Unexpected token") and quote the text, so the offset is
 * found here by a small validator and turned into a line, a column and what was expected. No
 * part of the text is quoted: a spec may hold data values (an init draft's `groups`), and a
 * file given in a spec's place may be a table of people.
 */
export function locateJsonError(text: string): JsonSyntax {
  const found = firstBadOffset(text);
  const { expected } = found;
  // A comma before a closing bracket: point at the comma, the character to remove.
  const head = text.slice(0, found.at).trimEnd();
  const at = head.endsWith(',') && /[}\]]/.test(text[found.at] ?? '') ? head.length - 1 : found.at;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = at - lineStart + 1;
  const c = text[at];
  const prevAt = before.trimEnd().length - 1;
  const prevLine = text.slice(0, prevAt + 1).split('\n').length;
  const hint =
    at >= text.length
      ? 'the file ends too early: every { needs its } and every [ its ], every " its closing "'
      : c === '/' && '/*'.includes(text[at + 1] ?? '')
        ? 'JSON has no comments: remove the comment (every line starting with // or text between /* and */)'
        : c === "'"
          ? 'use double quotes: JSON writes names and strings "like this"'
          : at !== found.at
            ? `remove this comma: JSON allows no comma after the last entry before '${text[found.at]}'`
            : expected === 'colon'
              ? `add a ':' between the name and its value`
              : expected === 'comma' && /["{[\d\-tfn]/.test(c ?? '')
                ? `add the missing comma at the end of the entry before (line ${prevLine})`
                : /[A-Za-z]/.test(c ?? '')
                  ? 'write text in double quotes, "like this": true, false and null are the only bare words'
                  : `fix the JSON at line ${line}, column ${column}`;
  const problem =
    at >= text.length
      ? 'the text ends before the JSON does'
      : at !== found.at
        ? `a comma where '${text[found.at]}' closes the list`
        : expected === 'colon'
          ? "expected ':' after a name"
          : expected === 'comma'
            ? "expected ',' or a closing bracket"
            : text.charCodeAt(at) < 0x20
              ? 'a line break or control character inside a "text"'
              : 'expected a value: an object, list, "text", number, true, false or null';
  return { line, column, problem, hint };
}

/**
 * Offset of the first character a JSON parser must reject (text.length when the text ends
 * early), and what was expected there when it was a separator.
 */
function firstBadOffset(text: string): { at: number; expected: 'colon' | 'comma' | 'other' } {
  let expected: 'colon' | 'comma' | 'other' = 'other';
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const fail = (what: 'colon' | 'comma' | 'other' = 'other'): never => {
    expected = what;
    throw i;
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(); // at the word's start: `five` is wrong as a whole
  };
  const string = () => {
    i++; // "
    while (i < n && text[i] !== '"') {
      const code = text.charCodeAt(i);
      if (code < 0x20) fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail();
      }
      i++;
    }
    if (i >= n) fail();
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === '-' || m[0] === '') fail();
    i += m![0].length;
  };
  /** `{…}` or `[…]`: entries separated by commas, `entry` reading one. */
  const container = (close: string, entry: () => void) => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      entry();
      ws();
      if (text[i] === ',') i++;
      else if (text[i] === close) {
        i++;
        return;
      } else fail('comma');
    }
  };
  const member = () => {
    ws();
    if (text[i] !== '"') fail();
    string();
    ws();
    if (text[i] !== ':') fail('colon');
    i++;
    value();
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') container('}', member);
    else if (c === '[') container(']', value);
    else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else fail();
  };
  try {
    value();
    ws();
    return { at: Math.min(i, n), expected };
  } catch (at) {
    return { at: Math.min(at as number, n), expected };
  }
}
