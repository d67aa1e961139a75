// Drives the operator console in real headless Chromium against a running stack (broker, gateways,
// recognizer). Started by the local stack's ConsoleBrowserTest, which passes the stack in the environment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};
const URL = env('CONSOLE_URL');
const OPERATOR = env('CONSOLE_OPERATOR');
const PASSWORD = env('CONSOLE_PASSWORD');
const SITE = env('CONSOLE_SITE');
const GATEWAY = env('CONSOLE_GATEWAY');
const FLOOR_MAX = Number(env('CONSOLE_FLOOR_MAX'));
const SHOTS = env('SCREENSHOT_DIR', 'target/screenshots');
const TIMEOUT = 60_000;

let browser;
let page;
mkdirSync(SHOTS, { recursive: true });

before(async () => {
  browser = await chromium.launch({
    executablePath: env('CHROMIUM', '/usr/bin/chromium'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(TIMEOUT);
  page.on('pageerror', (e) => console.error('page error:', e.message));
});

after(async () => {
  if (page) await page.screenshot({ path: `${SHOTS}/99-last.png`, fullPage: true }).catch(() => {});
  if (browser) await browser.close();
});

const site = () => page.locator(`article.site[data-site="${SITE}"]`);

async function propose(epsilon) {
  await site().locator('input[name=epsilon]').fill(String(epsilon));
  await site().locator('form.propose button').click();
  const result = site().locator('.proposal-result[data-outcome]');
  await result.waitFor();
  const outcome = await result.getAttribute('data-outcome');
  const text = await result.textContent();
  // The next proposal waits for its own outcome.
  await page.evaluate((s) => {
    const el = document.querySelector(`article.site[data-site="${s}"] .proposal-result`);
    delete el.dataset.outcome;
  }, SITE);
  return { outcome, text };
}

test('refuses a wrong password, then logs in', async () => {
  await page.goto(URL);
  await page.locator('#login-form').waitFor();
  await page.fill('#username', OPERATOR);
  await page.fill('#password', 'not-the-password');
  await page.click('#login-form button');
  await page.locator('#login-error', { hasText: 'Wrong' }).waitFor();
  await page.screenshot({ path: `${SHOTS}/01-login-refused.png` });
  await page.fill('#password', PASSWORD);
  await page.click('#login-form button');
  await page.locator('[data-testid=operator]', { hasText: OPERATOR }).waitFor();
});

test('shows the site, its live gateway and camera, its policy and floor', async () => {
  await site().waitFor();
  const gw = site().locator(`table.gateways tr[data-gateway="${GATEWAY}"]`);
  await gw.locator('td.ok', { hasText: 'yes' }).waitFor();
  await site().locator('table.cameras td[data-state=LIVE]').first().waitFor();
  await site().locator('dd[data-fact="floor (gateway)"]', { hasText: String(FLOOR_MAX) }).waitFor();
  // The demo's batch gateway enrolled the synthetic faces; its ledger's figures reach the site.
  await site().locator('dd[data-fact="enrolled images (gateways)"]', { hasText: /^[1-9]\d*$/ }).waitFor();
  const mechanism = await site().locator('dd[data-fact="mechanism"]').textContent();
  assert.match(mechanism, /EMBEDDING|FISHER|PEEP|RDP|GAUSSIAN/);
  // Models and their validation accuracy.
  await page.locator('[data-testid=models] tbody tr').first().waitFor();
  // The trade-off chart marks the site's ε per face.
  await page.waitForFunction((s) => document.querySelector(`article.site[data-site="${s}"]`)?.dataset.tradeoffMarker, SITE);
  // Noised counts read as non-negative estimates with an interval, never as a raw (possibly negative) release.
  const seen = await site().locator('table.cameras td[data-field=seen]').first().textContent();
  assert.match(seen, /^≈ \d+( \(95 %: \d+–\d+\))?$/);
  // Where the site has a gallery, the ε advisor shows the answer's expected figures per ε and marks the site's.
  const t = await page.evaluate(async (s) => (await fetch(`/console/api/tradeoff/${s}`)).json(), SITE);
  if (t.advisor) {
    assert.ok(t.advisor.expected.points.length > 0);
    await site().locator('[data-testid=advisor] table.advisor-table tr.current').waitFor();
    assert.equal(await site().locator('table.answers thead th').count(), 3, 'gallery facts are not repeated per row');
  }
  // The throughput chart is drawn from samples in which the live camera's frames flow.
  await page.waitForFunction(async (s) => {
    const series = await (await fetch('/console/api/series')).json();
    return (series[s] || []).some((x) => x.framesPerSec > 0);
  }, SITE, { polling: 1000 });
  await page.screenshot({ path: `${SHOTS}/02-sites.png`, fullPage: true });
});

test('an ε inside the floor is applied by the gateway', async () => {
  const { outcome, text } = await propose(8);
  assert.equal(outcome, 'ACCEPTED', text);
  assert.match(text, new RegExp(`${GATEWAY}: ACCEPTED, ε 8 applied`));
  await site().locator(`table.gateways tr[data-gateway="${GATEWAY}"] td[data-field=epsilon]`, { hasText: /^8$/ }).waitFor();
  await page.screenshot({ path: `${SHOTS}/03-accepted.png`, fullPage: true });
});

test('an ε above the floor is clamped to it by the gateway', async () => {
  const { outcome, text } = await propose(FLOOR_MAX * 10);
  assert.equal(outcome, 'CLAMPED', text);
  assert.match(text, new RegExp(`ε ${FLOOR_MAX} applied`));
  await site().locator(`table.gateways tr[data-gateway="${GATEWAY}"] td[data-field=epsilon]`,
    { hasText: new RegExp(`^${FLOOR_MAX}$`) }).waitFor();
});

test('both changes are in the audit trail, by this operator', async () => {
  const rows = page.locator('[data-testid=audit] tbody tr');
  await page.locator('[data-testid=audit] td.outcome-CLAMPED').first().waitFor();
  const all = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const mine = all.filter((r) => r[1] === SITE && r[2] === GATEWAY && r[3] === OPERATOR && r[4].startsWith('control-topic@'));
  assert.ok(mine.some((r) => r[5] === 'ACCEPTED' && r[7] === '8'), JSON.stringify(all));
  assert.ok(mine.some((r) => r[5] === 'CLAMPED' && r[6] === String(FLOOR_MAX * 10) && r[7] === String(FLOOR_MAX)),
    JSON.stringify(all));
  await page.locator('[data-testid=audit]').scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SHOTS}/04-audit.png`, fullPage: true });
});

test('logging out ends the session', async () => {
  await page.click('#logout');
  await page.locator('#login-error', { hasText: 'Logged out.' }).waitFor();
  const status = await page.evaluate(async () => (await fetch('/console/api/overview')).status);
  assert.equal(status, 401);
});
