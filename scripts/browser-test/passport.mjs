// Loads a passport page in headless Chromium (Debian's, through
// puppeteer-core), checks what a person sees and that nothing is loaded
// from another host, runs axe-core, checks at a 375-px viewport that no word
// in a table is broken that would fit its cell, and writes screenshots
// (SCREENSHOT.png at 412 px, SCREENSHOT-375.png at 375 px).
//
//   node passport.mjs URL SCREENSHOT.png 'text one' 'text two' …
//
// Prints one JSON line: {ok, problems[], violations[], requests[], bytes}.
// Exits 1 when a check fails, 2 when the browser cannot run.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const [url, shot, ...texts] = process.argv.slice(2);
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const userDataDir = fs.mkdtempSync('/tmp/pds-chromium-');
const out = { ok: false, problems: [], violations: [], requests: [] };

// brokenWords runs in the page: it lists each word of a table cell that
// the layout breaks across lines although it fits the cell on one line, or
// that is a word of letters alone (which never needs breaking), and says so
// when the page is wider than the viewport.
function brokenWords() {
  const problems = [];
  const split = [];
  for (const cell of document.querySelectorAll('th, td')) {
    if (cell.getBoundingClientRect().width < 2) continue; // hidden but for screen readers (a stacked table's head)
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of n.data.matchAll(/[^\s-]+-?/g)) { // a line may break after a hyphen
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (lines.size > 1) split.push({ cell, node: n, word: m[0] });
      }
    }
  }
  for (const { cell, node, word } of split) {
    const cs = getComputedStyle(cell);
    const room = cell.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    const probe = document.createElement('span');
    probe.style.cssText = 'position:absolute;visibility:hidden;white-space:nowrap';
    probe.textContent = word;
    node.parentNode.insertBefore(probe, node);
    const width = probe.getBoundingClientRect().width;
    probe.remove();
    const plain = /^[("“]*\p{L}+[)"”.,;:!?]*$/u.test(word);
    if (width <= room + 0.5 || plain) {
      problems.push(`${JSON.stringify(word)} is broken across lines in a cell ${Math.round(room)} px wide (the word is ${Math.round(width)} px)`);
    }
  }
  const over = document.documentElement.scrollWidth - window.innerWidth;
  if (over > 0) problems.push(`the page is ${over} px wider than the screen`);
  return problems;
}

let browser;
try {
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    userDataDir,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
} catch (e) {
  console.log(JSON.stringify({ ok: false, problems: ['chromium did not start: ' + e.message] }));
  process.exit(2);
}
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 412, height: 915 }); // a phone, as a QR code is scanned
  const origin = new URL(url).origin;
  page.on('request', (r) => out.requests.push(r.url()));
  const res = await page.goto(url, { waitUntil: 'networkidle0', timeout: 30000 });
  out.status = res.status();
  out.bytes = (await res.buffer()).length;
  for (const r of out.requests) {
    if (!r.startsWith(origin + '/') && !r.startsWith('data:')) out.problems.push('loaded from another host: ' + r);
  }
  const seen = await page.evaluate(() => document.body.innerText);
  for (const t of texts) {
    if (!seen.includes(t)) out.problems.push('not on the page as a person sees it: ' + JSON.stringify(t));
  }
  if (await page.evaluate(() => document.scripts.length) !== 0) out.problems.push('the page has a script');
  // axe runs in the page's own context through the DevTools protocol, which
  // the page's Content-Security-Policy does not govern.
  await page.evaluate(axeSource);
  const axe = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  out.violations = axe;
  for (const v of axe) {
    if (v.impact === 'serious' || v.impact === 'critical') out.problems.push(`axe ${v.impact}: ${v.id} (${v.help}) on ${v.nodes} element(s)`);
  }
  await page.screenshot({ path: shot, fullPage: true });
  // On the narrowest common phone, no word in a table is broken mid-word
  // unless it is longer than its cell is wide (a content hash, a URL), and
  // the page does not scroll sideways.
  await page.setViewport({ width: 375, height: 812 });
  for (const p of await page.evaluate(brokenWords)) out.problems.push('at 375 px: ' + p);
  await page.screenshot({ path: shot.replace(/\.png$/, '') + '-375.png', fullPage: true });
  out.ok = out.problems.length === 0;
} catch (e) {
  out.problems.push('browser test failed: ' + (e && e.stack || e));
} finally {
  await browser.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
