// Playwright Test on Debian's chromium (no browser download): its path
// from $CHROMIUM (default /usr/bin/chromium), with the flags a root user
// in a container needs. The server picks a free port and prints it;
// Playwright puts the named group into DEMO_PORT for the workers.
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
  testDir: 'tests',
  retries: 0,
  workers: 2,
  use: {
    baseURL: `http://127.0.0.1:${process.env.DEMO_PORT}`,
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    },
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
  webServer: {
    command: 'node server.js',
    wait: { stdout: /listening on (?<demo_port>\d+)/ },
    timeout: 30000,
  },
});
