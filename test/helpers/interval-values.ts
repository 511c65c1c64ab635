/**
 * Values and settings for interval hierarchies that exercise both ways of placing a value
 * (plain numbers for whole ones, exact decimals otherwise): whole numbers of every size up to
 * ±2^53 and just past it, decimals, texts Number() rounds to a whole number, and settings with
 * and without bottom/top coding, some at ±2^53.
 */
import { Random } from '../../src/util/random.ts';

export function intervalValues(seed: number): string[] {
  const random = new Random(seed);
  const values: string[] = [];
  for (let i = 0; i < 300; i++) {
    values.push(String(random.below(20000) - 10000));
    values.push(String((random.below(2 ** 32) - 2 ** 31) * 2 ** random.below(22)));
    values.push(String((random.below(2) ? 1 : -1) * (2 ** 53 - random.below(2000))));
    values.push((random.below(2000000) / 1000 - 1000).toFixed(random.below(4)));
  }
  // Whole values whose intervals end just past ±2^53, where a double rounds.
  for (let k = 1; k <= 12; k++) values.push(String(2 ** 53 - k), String(-(2 ** 53) + k));
  values.push(
    ...['0', '-0', '+7', ' 12 ', '007', '30.0', '3e1', '29.999999999999999', '-29.999999999999999'],
    ...['9007199254740992', '9007199254740993', '-9007199254740993', '1e21', '0x1F'],
  );
  return [...new Set(values)];
}

/** [widths, bottom, top] of interval hierarchies over `intervalValues`. */
export const INTERVAL_SETTINGS: [number[], number | undefined, number | undefined][] = [
  [[5, 10, 50], undefined, undefined],
  [[3, 6], -100, 1000],
  [[7], 10, undefined],
  [[2 ** 20, 2 ** 40, 2 ** 52], -(2 ** 53), 2 ** 53],
  [[2 ** 53], undefined, undefined],
  [[10], -(2 ** 53) + 5, 2 ** 53 - 5],
  [[0.5, 1], -3.5, 200],
  [[5, 10], 0.1, undefined],
];
