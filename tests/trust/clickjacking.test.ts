// Clickjacking: a page of another origin framed the live dashboard of a tokenless server,
// restyled it through postMessage, and the Allow button of a pending approval worked inside the
// frame. Now the dashboard may be framed only by its own origin (`frame-ancestors 'self'`), by
// other origins only when `serve --token … --frame-ancestor ORIGIN` names them, and a tokenless
// server refuses to name any. Checked in Debian's Chromium.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Frame } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../dashboard/support.js";
import { assertBuilt, runCli } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";

let browser: Browser;
let attacker: Server;
let attackerOrigin: string;
let serve: ServeProcess | undefined;
let home: TempHome | undefined;

beforeAll(async () => {
  browser = await launchChromium();
  // The attacker's page: another origin (another port) framing whatever URL it is given.
  attacker = createServer((request, response) => {
    const target = new URL(request.url ?? "/", "http://x").searchParams.get("frame") ?? "";
    response.writeHead(200, { "content-type": "text/html" }).end(`<iframe id="frame" src="${target}" style="width:800px;height:600px"></iframe>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerOrigin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
});
afterEach(async () => {
  await serve?.stop();
  home?.cleanup();
  [serve, home] = [undefined, undefined];
});

/** The attacker page framing `dashboard`: the frame once it has loaded (or was refused). */
async function framed(dashboard: string): Promise<{ frame: Frame; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  // The page's load event waits for its frame's document, the browser's error page included.
  await page.goto(`${attackerOrigin}/?frame=${encodeURIComponent(dashboard)}`, { waitUntil: "load" });
  const element = await page.waitForSelector("#frame");
  return { frame: (await element.contentFrame())!, close: () => context.close() };
}

/** Whether the dashboard's own markup rendered inside the frame. */
const rendersDashboard = (frame: Frame): Promise<boolean> => frame.evaluate(() => document.querySelector("#live") !== null).catch(() => false);

describe("the dashboard in another origin's frame", () => {
  it("is refused by the browser for a tokenless server (frame-ancestors 'self')", async () => {
    assertBuilt();
    home = tempHome("ze-frame-");
    serve = await startServe(["--root", home.root], home.env, home.root);
    const { frame, close } = await framed(`${serve.url}/dashboard`);
    expect(await rendersDashboard(frame)).toBe(false);
    expect(frame.url()).not.toBe(`${serve.url}/dashboard`);
    await close();
  });

  it("renders for an origin the server names with --frame-ancestor (a token server), and no other", async () => {
    assertBuilt();
    home = tempHome("ze-frame-");
    serve = await startServe(["--root", home.root, "--token", "t0k3n", "--frame-ancestor", attackerOrigin], home.env, home.root);
    const allowed = await framed(`${serve.url}/dashboard`);
    expect(await rendersDashboard(allowed.frame)).toBe(true);
    await allowed.close();
    const csp = (await fetch(`${serve.url}/dashboard`)).headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`frame-ancestors 'self' ${attackerOrigin}`);
  });

  it("--frame-ancestor is refused without a token, and for a value that is not an origin", async () => {
    assertBuilt();
    home = tempHome("ze-frame-");
    const tokenless = await runCli(["serve", "--port", "0", "--frame-ancestor", attackerOrigin], { env: home.env, cwd: home.root });
    expect(tokenless.code).toBe(2);
    expect(tokenless.stderr).toMatch(/--frame-ancestor needs --token/);
    const path = await runCli(["serve", "--port", "0", "--token", "t", "--frame-ancestor", `${attackerOrigin}/page`], { env: home.env, cwd: home.root });
    expect(path.code).toBe(2);
    expect(path.stderr).toMatch(/is not an origin/);
  });
});
