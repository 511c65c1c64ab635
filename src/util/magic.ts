/**
 * What a file's first and last bytes say it is, whatever it is called: the input readers pick a
 * format by it, and the spec loader tells a table given in a spec's place by it.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** A format an input's first bytes name, whatever the file is called (inputMagic). */
export type InputMagic = 'arrow' | 'parquet' | 'gzip' | 'zip';

/**
 * What a file's first 8 bytes (`head`) and last 4 (`tail`) say it is: an Arrow IPC file
 * (`ARROW1` and its two bytes of padding) or stream (its first message's continuation marker,
 * 0xFFFFFFFF), a Parquet file (`PAR1` first and last), a gzip stream (1F 8B) or a ZIP archive
 * (`PK` 03 04); undefined for anything else (a text file, CSV, whose header may start `PAR1`).
 */
export function inputMagic(head: Uint8Array, tail: Uint8Array): InputMagic | undefined {
  const at = (bytes: Uint8Array, magic: readonly number[]) => magic.every((b, k) => bytes[k] === b);
  if (at(head, ARROW_FILE) || at(head, [0xff, 0xff, 0xff, 0xff])) return 'arrow';
  if (at(head, PAR1) && at(tail, PAR1)) return 'parquet';
  if (at(head, [0x1f, 0x8b])) return 'gzip';
  if (at(head, [0x50, 0x4b, 0x03, 0x04])) return 'zip';
  return undefined;
}

const ARROW_FILE = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31, 0, 0];
const PAR1 = [0x50, 0x41, 0x52, 0x31];

/** The first 8 and last 4 bytes of a file of `size` bytes, by `readAt(buffer, position)`. */
export function headAndTail(
  size: number,
  readAt: (buffer: Uint8Array, position: number) => void,
): [Uint8Array, Uint8Array] {
  const head = new Uint8Array(Math.min(8, size));
  const tail = new Uint8Array(Math.min(4, size));
  readAt(head, 0);
  readAt(tail, size - tail.length);
  return [head, tail];
}

/** inputMagic of a file; undefined when it cannot be read or is a folder (its reader then tells). */
export function fileMagic(path: string): InputMagic | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    return inputMagic(
      ...headAndTail(stat.size, (buffer, position) => {
        readSync(fd, buffer, 0, buffer.length, position);
      }),
    );
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
