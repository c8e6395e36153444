// A Mocha demo suite with known failure rates (README.md).
const assert = require('assert');
const { fails } = require('../dice');

describe('cart', function () {
  // Slow enough that Mocha prints its duration ("(45ms)").
  it('adds items', async function () {
    await new Promise((resolve) => setTimeout(resolve, 45));
    assert.strictEqual([1, 2].length, 2);
  });

  describe('checkout', function () {
    it('retries the payment', function () {
      assert.strictEqual(fails('mocha-payment', 0.3), false);
    });

    it('talks to the legacy API', function () {
      assert.deepStrictEqual({ v: 1 }, { v: 2 });
    });
  });

  it.skip('refunds', function () {});
});
