// The dashboard on the real local daemon (`serve --register`, started by `service start`): the
// token form on 401, then the log panel reading the daemon's own `GET /v1/logs` (no stand-in),
// with nothing loaded from outside the host.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { assertBuilt } from "../support/cli.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "../daemon/support.js";
import { launchChromium, openPage } from "./support.js";

let browser: Browser;
let home: DaemonHome | undefined;
beforeAll(async () => {
  assertBuilt();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await cleanupDaemonHome(home);
});

describe("the dashboard on the daemon", () => {
  it("asks for the daemon token, then shows the daemon's log", async () => {
    home = daemonHome();
    const started = await home.cli(["service", "start"]);
    expect(started.code).toBe(0);
    const { url } = home.registration()!;
    const { page, foreign, errors } = await openPage(browser);
    await page.goto(`${url}/dashboard`);
    await page.locator("#login").waitFor();
    await page.locator("#token").fill(home.token());
    await page.locator("#login button[type=submit]").click();
    await page.locator("#live[data-state=live]").waitFor();
    // The daemon's own log: its start line is there, and the panel is shown.
    await page.locator("#log-entries").getByText("daemon.start").waitFor();
    expect(await page.locator("#logs").isVisible()).toBe(true);
    expect(foreign(new URL(url).origin)).toEqual([]);
    expect(errors.filter((error) => !error.includes("401"))).toEqual([]);
    await page.context().close();
  });
});
