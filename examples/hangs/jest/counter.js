// This run's number, counted in $HANG_STATE (default .hang-count).
const fs = require('fs');

function runNumber() {
  const path = process.env.HANG_STATE || '.hang-count';
  let n = 1;
  try {
    n = parseInt(fs.readFileSync(path, 'utf8') || '0', 10) + 1;
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  fs.writeFileSync(path, String(n));
  return n;
}

module.exports = { runNumber };
