/**
 * The host's speed (bench/host-speed.ts), which the benchmarks record beside their figures: its
 * loops run (two worker threads among them) and give a figure each, at a small scale here.
 */
import { describe, expect, it } from 'vitest';
import { hostSpeed, hostSpeedLine } from '../../bench/host-speed.ts';

describe('bench host speed', () => {
  it('measures every loop, the two threads side by side, at the scale asked for', async () => {
    const speed = await hostSpeed(1 / 64);
    expect(speed.scale).toBe(1 / 64);
    for (const key of ['computeMs', 'twoThreadsMs', 'randomMs', 'copyGBps', 'sha256MBps'] as const) {
      expect(Number.isFinite(speed[key]), key).toBe(true);
      expect(speed[key], key).toBeGreaterThan(0);
    }
    const line = hostSpeedLine(speed);
    expect(line).toContain(`compute ${speed.computeMs} ms`);
    expect(line).toContain(`two threads ${speed.twoThreadsMs} ms`);
    expect(line).toContain(`sha256 ${speed.sha256MBps} MB/s`);
  });

  it('refuses a scale outside (0, 1]', async () => {
    await expect(hostSpeed(0)).rejects.toThrow(/scale is in \(0, 1\]/);
    await expect(hostSpeed(2)).rejects.toThrow(/scale is in \(0, 1\]/);
  });
});
