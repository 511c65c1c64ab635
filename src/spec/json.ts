/**
 * Checks on a spec's raw JSON text that `JSON.parse` cannot make: a key given twice in one
 * object is silently reduced to its last value, so `"age"` listed twice under `attributes`
 * (say once as quasi-identifying, once as insensitive) would lose one of the settings unnoticed.
 */

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
