// The dashboard in real headless Chromium: load each page at 1400 and at
// 400 pixels, follow same-origin links breadth-first, and report what a
// user would see (status, title, text, links) and what must never happen
// (console errors, uncaught exceptions, dialogs, requests leaving
// 127.0.0.1) as one JSON document on stdout. The pytest suite beside it
// decides what passes. Usage: node browse.js SPEC.json, where SPEC is
// {"base": URL, "token": T|null, "pages": [PATH...],
//  "follow": {PATH_PREFIX: N...}: at most N same-origin links under each
//  prefix, "followText": only links whose text holds it,
//  "shots": DIR|null, "actions": [{"path": P, "width": W, "js": EXPR}...],
//  "axe": true (axe-core on every page, its serious and critical
//  violations in "axe"), "dark": true (each page once more at 1400 px in
//  the dark scheme, path suffixed "#dark"), "steps": [{"path": P, "width":
//  W, "do": [STEP...]}] where a STEP is ["type", SELECTOR, TEXT],
//  ["click", SELECTOR], ["clickNav", SELECTOR] (and wait for the page to
//  load again), ["press", KEY], ["eval", EXPR] (its value goes to the
//  page's "steps"), ["wait", EXPR] (until it is true, 10 s at most)},
//  "shotHeight": N (screenshots of the page's top N pixels at most)
// (an action's value goes to the page's "actions"). Each page's "layout"
// measures what a narrow screen shows badly: chart text in rendered
// pixels, titles wider than their box, message cells' widths, words
// broken in the middle though they fit on a line, and word-break: break-all
// anywhere.
'use strict';
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WIDTHS = [1400, 400];
const AXE = path.join(__dirname, 'node_modules', 'axe-core', 'axe.min.js');

function shotName(p, width) {
  const base = p.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '') ||
    'index';
  return base.slice(0, 80) + '-' + width + '.png';
}

// What a page's layout gives at this width (run in the page).
const LAYOUT = () => {
  const out = { chartTexts: 0, chartFontMin: null, titles: [], msgWidths: [],
    orderRowMax: 0, breaks: [], breakAll: [] };
  const font = (px) => {
    out.chartTexts++;
    if (out.chartFontMin === null || px < out.chartFontMin)
      out.chartFontMin = px;
  };
  // Chart text: HTML text in a .chart at its computed size, SVG text at
  // its size times the scale the SVG is drawn at.
  for (const e of document.querySelectorAll('.chart *, svg text')) {
    if (e.closest('svg')) {
      if (e.tagName.toLowerCase() !== 'text')
        continue;
      const m = e.getScreenCTM();
      font(parseFloat(getComputedStyle(e).fontSize) * (m ? m.a : 1));
    } else if ([...e.childNodes].some((n) => n.nodeType === 3 &&
        n.textContent.trim() !== '') && e.getClientRects().length > 0) {
      font(parseFloat(getComputedStyle(e).fontSize));
    }
  }
  for (const h of document.querySelectorAll('h1'))
    out.titles.push({ scroll: h.scrollWidth, client: h.clientWidth,
      right: h.getBoundingClientRect().right });
  for (const td of document.querySelectorAll('td.msg'))
    out.msgWidths.push(td.getBoundingClientRect().width);
  for (const tr of document.querySelectorAll('#order tbody tr:not(.msg)'))
    out.orderRowMax = Math.max(out.orderRowMax,
      tr.getBoundingClientRect().height);
  for (const e of document.querySelectorAll('body *'))
    if (getComputedStyle(e).wordBreak === 'break-all')
      out.breakAll.push(e.tagName + '.' + e.className);
  // A word (letters, digits and '_') drawn on two lines though it is
  // narrower than its block: broken between two of its letters, where no
  // rule of line breaking allows it unless forced.
  const walk = document.createTreeWalker(document.body,
    NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('script,style,svg') || !el.getClientRects().length)
      continue;
    let block = el;
    while (block && getComputedStyle(block).display.startsWith('inline'))
      block = block.parentElement;
    const cs = block ? getComputedStyle(block) : null;
    const room = block ? block.clientWidth - parseFloat(cs.paddingLeft) -
      parseFloat(cs.paddingRight) : window.innerWidth;
    const re = /[\p{L}\p{N}_]+/gu;
    let m;
    while ((m = re.exec(n.textContent)) !== null) {
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0);
      if (rects.length < 2)
        continue;
      const width = rects.reduce((a, r) => a + r.width, 0);
      if (width < room - 2 && out.breaks.length < 20)
        out.breaks.push(m[0] + ' (' + Math.round(width) + ' of ' + room +
          ' px, in ' + block.tagName + '.' + block.className + ')');
    }
  }
  return out;
};

// axe-core's serious and critical violations of the page, one line each
// (run through the DevTools protocol, as a script of the page's own
// would be refused by its CSP).
async function axeRun(page) {
  await page.evaluate(fs.readFileSync(AXE, 'utf8'));
  const r = await page.evaluate(() => axe.run(document,
    { resultTypes: ['violations'] }));
  return r.violations.filter((v) => v.impact === 'serious' ||
    v.impact === 'critical').map((v) => v.id + ' (' + v.impact + '): ' +
    v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | '));
}

// A step of an interaction (see the usage above).
async function step(page, s, seen) {
  const [op, a, b] = s;
  if (op === 'type')
    await page.type(a, b);
  else if (op === 'click')
    await page.click(a);
  else if (op === 'clickNav')
    await Promise.all([page.waitForNavigation({ waitUntil: 'load',
      timeout: 20000 }), page.click(a)]);
  else if (op === 'press')
    await page.keyboard.press(a);
  else if (op === 'eval')
    seen.steps.push(await page.evaluate(a));
  else if (op === 'wait')
    await page.waitForFunction(a, { timeout: 10000 });
  else
    throw new Error('unknown step ' + op);
}

// One page at one width: what loading it gave.
async function visit(browser, spec, p, width, report, dark) {
  const page = await browser.newPage();
  const seen = { path: dark ? p + '#dark' : p, width, console: [],
    errors: [], external: [], dialogs: [], requests: 0 };
  await page.setViewport({ width, height: 900 });
  if (dark)
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme',
      value: 'dark' }]);
  if (spec.token)
    await page.setExtraHTTPHeaders({ Authorization: 'Bearer ' + spec.token });
  await page.setRequestInterception(true);
  page.on('request', (r) => {
    const u = new URL(r.url());
    seen.requests++;
    if (u.protocol === 'data:' || u.protocol === 'about:' ||
        (u.protocol === 'http:' && u.hostname === '127.0.0.1')) {
      r.continue();
    } else {
      seen.external.push(r.url());
      r.abort();
    }
  });
  page.on('console', (m) => {
    if (m.type() === 'error')
      seen.console.push(m.text());
  });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  page.on('dialog', async (d) => {
    seen.dialogs.push(d.type() + ': ' + d.message());
    await d.dismiss();
  });
  const resp = await page.goto(spec.base.replace(/\/$/, '') + p,
    { waitUntil: 'load', timeout: 20000 });
  seen.status = resp ? resp.status() : 0;
  seen.csp = resp ? resp.headers()['content-security-policy'] || null : null;
  seen.title = await page.title();
  seen.text = await page.evaluate(() =>
    document.body ? document.body.innerText : '');
  seen.links = await page.evaluate(() =>
    Array.from(document.querySelectorAll('a[href]'),
      (a) => ({ href: a.href, text: a.textContent })));
  seen.scrollWidth = await page.evaluate(() =>
    document.documentElement.scrollWidth);
  seen.innerWidth = await page.evaluate(() => window.innerWidth);
  seen.layout = await page.evaluate(LAYOUT);
  for (const a of spec.actions || []) {
    if (dark || a.path !== p || a.width !== undefined && a.width !== width)
      continue;
    seen.actions = seen.actions || [];
    seen.actions.push(await page.evaluate(a.js));
  }
  if (spec.axe)
    seen.axe = await axeRun(page);
  for (const st of spec.steps || []) {
    if (dark || st.path !== p || st.width !== undefined &&
        st.width !== width)
      continue;
    seen.steps = seen.steps || [];
    for (const s of st.do)
      await step(page, s, seen);
  }
  if (spec.shots) {
    seen.shot = path.join(spec.shots, shotName(p, width)
      .replace(/\.png$/, dark ? '-dark.png' : '.png'));
    if (spec.shotHeight) {
      const h = await page.evaluate(() =>
        document.documentElement.scrollHeight);
      await page.screenshot({ path: seen.shot, captureBeyondViewport: true,
        clip: { x: 0, y: 0, width, height: Math.min(h, spec.shotHeight) } });
    } else
      await page.screenshot({ path: seen.shot, fullPage: true });
  }
  await page.close();
  report.push(seen);
  return seen;
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const origin = new URL(spec.base).origin;
  const report = [];
  if (spec.shots)
    fs.mkdirSync(spec.shots, { recursive: true });
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update',
      '--disable-default-apps', '--disable-sync'],
  });
  try {
    const queue = spec.pages.slice();
    const done = new Set(queue);
    const budget = Object.assign({}, spec.follow || {});
    while (queue.length > 0) {
      const p = queue.shift();
      let links = [];
      for (const w of WIDTHS)
        links = (await visit(browser, spec, p, w, report, false)).links;
      if (spec.dark)
        await visit(browser, spec, p, WIDTHS[0], report, true);
      for (const l of links) {
        const u = new URL(l.href);
        const lp = u.pathname + u.search;
        const pre = Object.keys(budget).find((k) => lp.startsWith(k));
        if (u.origin !== origin || done.has(lp) || pre === undefined ||
            budget[pre] <= 0 ||
            (spec.followText && !l.text.includes(spec.followText)))
          continue;
        budget[pre]--;
        done.add(lp);
        queue.push(lp);
      }
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
