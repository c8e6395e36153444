// A small shop whose integrations misbehave now and then.
'use strict';
const fs = require('fs');
const path = require('path');

// A uniform number from (seed, name, k): FNV-1a, then murmur3's
// finalizer, the same in the pytest and go demos.
function draw(seed, name, k) {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(`${seed}:${name}:${k}`)) {
    h = Math.imul(h ^ b, 0x01000193) >>> 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

// How late the network is for this call, 0..1.
function networkJitter(name) {
  const seed = process.env.DEMO_SEED;
  const state = process.env.DEMO_STATE;
  if (seed === undefined || !state) return Math.random();
  const file = path.join(state, `${name}.count`);
  let k = 0;
  try {
    k = parseInt(fs.readFileSync(file, 'utf8'), 10);
  } catch (e) {
    k = 0;
  }
  fs.writeFileSync(file, String(k + 1));
  return draw(seed, name, k);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

module.exports = {
  cartTotal: (prices) => Math.round(prices.reduce((a, b) => a + b, 0) * 100) / 100,
  // The payment gateway answers in time 70% of the time.
  charge(amount) {
    if (networkJitter('payment_retry') < 0.3) {
      throw new Error('payment gateway did not answer in 2 s');
    }
    return { status: 'paid', amount };
  },
  legacyStatus: () => ({ v: 1 }),
  syncInventory() {
    throw new Error('inventory service refused the connection');
  },
  // The coupon service's cache expires too early 20% of the time.
  stackCoupons(codes) {
    if (networkJitter('coupon_stacking') < 0.2) return null;
    return [...new Set(codes)].sort();
  },
  async buildIndex(words) {
    await sleep(50);
    return Object.fromEntries([...words].sort().map((w, i) => [w, i]));
  },
  async receipt(lines) {
    await sleep(30);
    return lines.map(([n, p]) => `${n.padEnd(10)} ${p.toFixed(2).padStart(8)}`).join('\n');
  },
};
