// One dashboard suite's fixtures: a `serve` with the scripted test model and a Chromium for the
// whole file, one recorded page per test, and after each test the checks every dashboard test
// makes — the page asked for something, nothing left the host, the CSP never refused its script
// — with the model's fallback reply reset.
import type { Browser, BrowserContextOptions } from "playwright-core";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { launchChromium, openPage, startDashboardServer, type DashboardServer, type RecordedPage } from "./support.js";

export interface DashboardSuite {
  readonly server: DashboardServer;
  readonly browser: Browser;
  /** A recorded page (checked after the test) that has not loaded anything yet. */
  page(options?: BrowserContextOptions): Promise<RecordedPage>;
  /** A recorded page at `<url>/dashboard<fragment>`, once the server stream is live. */
  open(fragment?: string, options?: BrowserContextOptions): Promise<RecordedPage>;
}

export function dashboardSuite(options: { token?: string } = {}): DashboardSuite {
  let server: DashboardServer | undefined;
  let browser: Browser | undefined;
  let current: RecordedPage | undefined;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startDashboardServer(options), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  afterEach(async () => {
    const recorded = current;
    current = undefined;
    server?.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
    if (!recorded || !server) return;
    await recorded.page.context().close();
    expect(recorded.requests.length).toBeGreaterThan(0);
    expect(recorded.foreign(server.origin)).toEqual([]);
    expect(recorded.errors.filter((error) => /Content Security Policy|pageerror/i.test(error))).toEqual([]);
  });
  const suite: DashboardSuite = {
    get server() {
      if (!server) throw new Error("the suite's server has not started");
      return server;
    },
    get browser() {
      if (!browser) throw new Error("the suite's browser has not started");
      return browser;
    },
    async page(contextOptions = {}) {
      current = await openPage(suite.browser, contextOptions);
      return current;
    },
    async open(fragment = "", contextOptions = {}) {
      const recorded = await suite.page(contextOptions);
      await recorded.page.goto(`${suite.server.url}/dashboard${fragment}`);
      await recorded.page.locator("#live[data-state=live]").waitFor();
      return recorded;
    },
  };
  return suite;
}
