// The demo's dice: whether the flaky test fails on its Nth execution comes
// from a generator seeded with FLAKY_DEMO_SEED and N, so that N runs fail a
// known number of times (the integration tests count on it), yet the
// sequence looks like a real flaky test's.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const STATE = process.env.FLAKY_DEMO_STATE || path.join(here, '.state');
const SEED = Number(process.env.FLAKY_DEMO_SEED || 25);

// This test's execution number, 1 for its first: one file per execution,
// created exclusively, so runs at once (--jobs, workers) never share one.
export function execution(name) {
  fs.mkdirSync(STATE, { recursive: true });
  for (let n = 1; ; n++) {
    try {
      fs.closeSync(fs.openSync(path.join(STATE, `${name}.${n}`), 'wx'));
      return n;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
  }
}

// mulberry32 of the seed and n: a number in [0, 1).
export function dice(n) {
  let a = (SEED * 1000003 + n) >>> 0;
  a = (a + 0x6d2b79f5) >>> 0;
  let t = Math.imul(a ^ (a >>> 15), 1 | a);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// Does the test called name fail this time, at this rate?
export function fails(name, rate) {
  return dice(execution(name)) < rate;
}
