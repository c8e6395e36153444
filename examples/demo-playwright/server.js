// The demo's web app: a shop page served on a free port (port 0), which it
// prints for playwright.config.js to read ("listening on PORT"), so that
// runs at once (flakyctl analyze --jobs) never fight over a port.
const http = require('http');

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>Demo shop</title></head>
<body>
<h1>Demo shop</h1>
<p>Items: <span id="count">0</span></p>
<button id="add">Add item</button>
<button id="pay">Pay</button>
<p id="status"></p>
<script>
  let count = 0;
  document.getElementById('add').onclick = () => {
    document.getElementById('count').textContent = String(++count);
  };
  document.getElementById('pay').onclick = async () => {
    const r = await fetch('/api/pay', { method: 'POST' });
    document.getElementById('status').textContent = await r.text();
  };
</script>
</body></html>`;

const server = http.createServer((req, res) => {
  if (req.url === '/api/pay' && req.method === 'POST') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('paid');
  } else if (req.url === '/api/legacy') {
    res.writeHead(410, { 'content-type': 'text/plain' });
    res.end('gone');
  } else {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  }
});
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on ${server.address().port}`);
});
