// The dashboard on a `serve --token`: the page itself is public; it asks for the token only when
// the API answers 401, keeps a wrong token out, works once the right one is entered (kept for
// the tab across a reload), and signs out on request; the form says where the token is; a link
// to a Session opens it once signed in. Nothing leaves the host.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, openPage, startDashboardServer, type DashboardServer } from "./support.js";

const TOKEN = "dashboard-secret-4f1c";
let server: DashboardServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([startDashboardServer({ token: TOKEN }), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("a server that demands a token", () => {
  it("serves the page without a token and the API still refuses one", async () => {
    expect((await fetch(`${server.url}/dashboard`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/servers/local/sessions`)).status).toBe(401);
  });

  it("shows the token form only on 401, refuses a wrong token, works with the right one, and signs out", async () => {
    const sessionId = await server.createSession();
    const recorded = await openPage(browser);
    const { page, requests } = recorded;
    try {
      await page.goto(`${server.url}/dashboard`);
      const login = page.locator("#login");
      await login.waitFor();
      expect(await page.locator("#main").isHidden()).toBe(true);
      expect(await page.locator("#sign-out").isHidden()).toBe(true);
      const refused = requests.find((request) => new URL(request.url()).pathname === "/v1/servers/local/sessions");
      expect((await refused!.response())!.status()).toBe(401);
      expect(refused!.headers()["authorization"]).toBeUndefined();

      await page.locator("#token").fill("not-the-token");
      await page.locator("#login button[type=submit]").click();
      await expect.poll(() => page.locator("#login-error").textContent()).toContain("not accepted");
      expect(await login.isVisible()).toBe(true);
      expect(page.url()).toBe(`${server.url}/dashboard`); // the form never navigates

      await page.locator("#token").fill(TOKEN);
      await page.locator("#login button[type=submit]").click();
      await page.locator(`[data-session-id="${sessionId}"]`).waitFor();
      await page.locator("#live[data-state=live]").waitFor();
      expect(await login.isHidden()).toBe(true);
      expect(await page.locator("#sign-out").isVisible()).toBe(true);
      const events = requests.find((request) => new URL(request.url()).pathname === "/v1/servers/local/events");
      expect(events!.headers()["authorization"]).toBe(`Bearer ${TOKEN}`);

      // The tab keeps the token: a reload goes straight to the Sessions.
      await page.reload();
      await page.locator(`[data-session-id="${sessionId}"]`).waitFor();
      expect(await login.isHidden()).toBe(true);

      await page.locator("#sign-out").click();
      await login.waitFor();
      expect(await page.locator("#main").isHidden()).toBe(true);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    } finally {
      await page.context().close();
    }
    expect(recorded.foreign(server.origin)).toEqual([]);
    expect(recorded.errors.filter((error) => /Content Security Policy|pageerror/i.test(error))).toEqual([]);
    // The token never appears in a URL.
    expect(requests.filter((request) => request.url().includes(TOKEN))).toEqual([]);
  });

  it("says where the token is, and opens a linked Session once signed in", async () => {
    const sessionId = await server.createSession();
    const recorded = await openPage(browser);
    const { page } = recorded;
    try {
      await page.goto(`${server.url}/dashboard#/sessions/${sessionId}`);
      await page.locator("#login").waitFor();
      const help = (await page.locator("#token-help").innerText()).replace(/\s+/g, " ");
      // The daemon's file, by its name, where it lives (with the default spelled out), and serve's flag and variable.
      expect(help).toContain("daemon-token");
      expect(help).toContain("$XDG_DATA_HOME/ze-harness/daemon-token");
      expect(help).toContain("~/.local/share/ze-harness/daemon-token");
      expect(help).toContain("ze-harness serve");
      expect(help).toContain("--token");
      expect(help).toContain("ZE_HARNESS_TOKEN");
      expect(await page.locator("#token-help").isVisible()).toBe(true);

      await page.locator("#token").fill(TOKEN);
      await page.locator("#login button[type=submit]").click();
      await page.locator("#session-view .view-header").getByText(sessionId).waitFor();
      expect(await page.locator("#sessions-section").isHidden()).toBe(true);
      expect(new URL(page.url()).hash).toBe(`#/sessions/${sessionId}`);
    } finally {
      await page.context().close();
    }
    expect(recorded.foreign(server.origin)).toEqual([]);
    expect(recorded.errors.filter((error) => /Content Security Policy|pageerror/i.test(error))).toEqual([]);
  });
});
