// A Vitest demo suite with known failure rates (README.md).
import { describe, expect, test } from 'vitest';
import { fails } from '../dice.js';

describe('cart', () => {
  // Slow enough that a duration is always printed.
  test('adds items', async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([1, 2].length).toBe(2);
  });

  describe('checkout', () => {
    test('retries the payment', () => {
      expect(fails('vitest-payment', 0.3)).toBe(false);
    });

    test('talks to the legacy API', () => {
      expect({ v: 1 }).toEqual({ v: 2 });
    });
  });

  test.skip('refunds', () => {});
});
