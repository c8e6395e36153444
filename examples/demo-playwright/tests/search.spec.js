// Stable tests, one with characters a pattern must escape.
const { test, expect } = require('@playwright/test');

test('has a title', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveTitle('Demo shop');
});

test('matches (a+b) * c literally', async () => {
  expect('(a+b) * c'.length).toBe(9);
});
