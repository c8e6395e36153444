// Stable tests, one with characters a pattern must escape.
const assert = require('assert');

describe('search', function () {
  it('finds a word', function () {
    assert.ok('flaky tests'.includes('tests'));
  });

  it('matches (a+b) * c literally', function () {
    assert.strictEqual('(a+b) * c'.length, 9);
  });
});

it('top level', function () {
  assert.strictEqual(1 + 1, 2);
});
