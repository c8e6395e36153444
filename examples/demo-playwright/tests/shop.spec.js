// A Playwright demo suite with known failure rates (README.md).
const { test, expect } = require('@playwright/test');
const { fails } = require('../dice');

test.describe('shop', () => {
  test('adds items', async ({ page }) => {
    await page.goto('/');
    await page.click('#add');
    await page.click('#add');
    await expect(page.locator('#count')).toHaveText('2');
  });

  test('retries the payment', async ({ page }) => {
    await page.goto('/');
    await page.click('#pay');
    await expect(page.locator('#status')).toHaveText('paid');
    expect(fails('playwright-payment', 0.3)).toBe(false);
  });

  test('talks to the legacy API', async ({ request }) => {
    const r = await request.get('/api/legacy');
    expect(r.status()).toBe(200);
  });

  test.skip('refunds', async () => {});
});
