// On every third run (runs 3, 6, 9..., counted in $HANG_STATE) the flag
// spinUntilReady polls is never set: a busy loop, which Jest's own
// timeout cannot end (it runs on the same thread), only the time limit.
const { runNumber } = require('../counter');

const hangs = runNumber() % 3 === 0;

function spinUntilReady(isReady) {
  while (!isReady()) {
    // polls a flag nobody sets
  }
  return true;
}

test('connects', () => {
  expect(1 + 1).toBe(2);
});

test('waits until ready', () => {
  let ready = !hangs;
  expect(spinUntilReady(() => ready)).toBe(true);
});

test('after', () => {
  expect('pong'.toUpperCase()).toBe('PONG');
});
