// A node:test demo suite with known failure rates (README.md).
const assert = require('node:assert');
const { describe, it } = require('node:test');
const { fails } = require('../dice');

describe('cart', () => {
  it('adds items', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.strictEqual([1, 2].length, 2);
  });

  describe('checkout', () => {
    it('retries the payment', () => {
      assert.strictEqual(fails('nodetest-payment', 0.3), false);
    });

    it('talks to the legacy API', () => {
      assert.deepStrictEqual({ v: 1 }, { v: 2 });
    });
  });

  it.skip('refunds', () => {});
});
