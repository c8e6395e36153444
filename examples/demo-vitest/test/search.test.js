// Stable tests, one with characters a pattern must escape.
import { describe, expect, test } from 'vitest';

describe('search', () => {
  test('finds a word', () => {
    expect('flaky tests'.includes('tests')).toBe(true);
  });

  test('matches (a+b) * c literally', () => {
    expect('(a+b) * c'.length).toBe(9);
  });
});

test('top level', () => {
  expect(1 + 1).toBe(2);
});
