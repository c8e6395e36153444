// Stable tests, one with characters a pattern must escape.
const assert = require('node:assert');
const { describe, it, test } = require('node:test');

describe('search', () => {
  it('finds a word', () => {
    assert.ok('flaky tests'.includes('tests'));
  });

  it('matches (a+b) * c literally', () => {
    assert.strictEqual('(a+b) * c'.length, 9);
  });
});

test('top level', () => {
  assert.strictEqual(1 + 1, 2);
});
