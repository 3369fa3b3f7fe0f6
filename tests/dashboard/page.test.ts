// GET /dashboard on a real `serve` (the built binary, the scripted test model behind it) in a
// real headless Chromium: the exact CSP with the build-time script hash, the server identity,
// the Sessions grid with live status, a Turn streaming live in the Session view, a permission
// request and a question answered from the page (the grid, hidden while a Session is open, is
// kept live), the `--zh-*` theme and its postMessage rule — and every request the page makes
// stays on the host. The log panel: logs.test.ts; routes and the composer: routes.test.ts,
// composer.test.ts.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk, unwrap, type ToolTurnPart } from "../../clients/index.js";
import { THEME_TOKENS } from "../../clients/dashboard/theme.js";
import { repoRoot } from "../support/harness.js";
import { deferred, launchChromium, openPage, SERVER, startDashboardServer, type DashboardServer, type RecordedPage } from "./support.js";

let server: DashboardServer;
let browser: Browser;
let current: RecordedPage | undefined;

beforeAll(async () => {
  [server, browser] = await Promise.all([startDashboardServer(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
afterEach(async () => {
  const recorded = current;
  current = undefined;
  server.model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
  if (!recorded) return;
  await recorded.page.context().close();
  // Nothing the page asked for left the host, and its script was never refused by the CSP.
  expect(recorded.requests.length).toBeGreaterThan(0);
  expect(recorded.foreign(server.origin)).toEqual([]);
  expect(recorded.errors.filter((error) => /Content Security Policy|pageerror/i.test(error))).toEqual([]);
});

async function dashboard(): Promise<RecordedPage> {
  current = await openPage(browser);
  await current.page.goto(`${server.url}/dashboard`);
  await current.page.locator("#live[data-state=live]").waitFor();
  return current;
}

const EXPECTED_CSP = (hash: string) =>
  `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${hash}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

describe("GET /dashboard", () => {
  it("serves one self-contained page with the server's identity and the exact CSP of its inline script", async () => {
    const response = await fetch(`${server.url}/dashboard`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await response.text();
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toBe(""); // inline: no src, no type
    const hash = createHash("sha256").update(scripts[0]![2]!, "utf8").digest("base64");
    expect(response.headers.get("content-security-policy")).toBe(EXPECTED_CSP(hash));
    // Framing only by the page's own origin (tests/trust/clickjacking.test.ts frames it from another).
    expect(response.headers.get("content-security-policy")).toMatch(/; frame-ancestors 'self'$/);
    if (!html.includes('<meta name="ze-harness-server" content="local">')) throw new Error("the identity meta tag does not name the server");
    if (html.includes("%ZE_HARNESS_SERVER%")) throw new Error("the identity placeholder was left in the page");
    // The markup asks for nothing: no external script, stylesheet, image or font (what the
    // script fetches at run time is recorded in the browser tests).
    const markup = html.replace(scripts[0]![0], "");
    expect(markup.length).toBeLessThan(30_000);
    if (/<link\b|\bsrc=|url\(|@import|https?:\/\//.test(markup)) throw new Error("the page's markup references another resource");
    // The same asset the build wrote, with only the identity filled in.
    const built = JSON.parse(readFileSync(join(repoRoot, "dist", "dashboard.json"), "utf8")) as { html: string; scriptHash: string };
    expect(built.scriptHash).toBe(`sha256-${hash}`);
    if (built.html.replace("%ZE_HARNESS_SERVER%", "local") !== html) throw new Error("the served page is not the built asset with the identity filled in");
    // HEAD answers as the GET would, without a body; only exactly /dashboard is the page.
    const head = await fetch(`${server.url}/dashboard`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-security-policy")).toBe(EXPECTED_CSP(hash));
    expect(await head.text()).toBe("");
    expect((await fetch(`${server.url}/dashboard/`)).status).toBe(404);
    expect((await fetch(`${server.url}/dashboard`, { method: "POST" })).status).toBe(404);
    // The listener's Host check still comes first.
    // (node:http: fetch does not let a caller set Host.)
    const foreignHost = await new Promise<number | undefined>((resolve, reject) => {
      const request = httpGet(`${server.url}/dashboard`, { headers: { host: "evil.example" } }, (response) => {
        response.resume();
        resolve(response.statusCode);
      });
      request.on("error", reject);
    });
    expect(foreignHost).toBe(403);
  });

  it("shows an error instead of guessing when the page carries no valid server name", async () => {
    const built = JSON.parse(readFileSync(join(repoRoot, "dist", "dashboard.json"), "utf8")) as { html: string; scriptHash: string };
    current = await openPage(browser);
    // The unfilled asset, from the same origin, under the real policy.
    await current.page.route(`${server.url}/unfilled`, (route) =>
      route.fulfill({ contentType: "text/html", headers: { "content-security-policy": EXPECTED_CSP(built.scriptHash.slice(7)) }, body: built.html }),
    );
    await current.page.goto(`${server.url}/unfilled`);
    await expect.poll(() => current!.page.locator("#banner").textContent()).toContain("without a valid server name");
    expect(await current.page.locator("#main").isHidden()).toBe(true);
    expect(current.requests.map((request) => new URL(request.url()).pathname)).toEqual(["/unfilled"]);
  });
});

describe("document-relative requests", () => {
  it("works under a path prefix: every API call stays under it", async () => {
    const sessionId = await server.createSession();
    current = await openPage(browser);
    const { page, requests } = current;
    // A stand-in for an embedder's proxy that forwards <prefix>/… to the host as /…. It buffers
    // whole responses, so it cannot carry the server stream: that one answers 503 here.
    await page.route(
      (url) => url.origin === server.origin && url.pathname.startsWith("/prefix/"),
      async (route) => {
        const target = new URL(route.request().url());
        target.pathname = target.pathname.slice("/prefix".length);
        if (target.pathname.endsWith("/events")) return route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ _tag: "UnavailableError", message: "not proxied", reason: "service_unavailable" }) });
        return route.fulfill({ response: await route.fetch({ url: target.href }) });
      },
    );
    // A Session's route is the URL's fragment: it opens under the prefix too, and back is the grid.
    await page.goto(`${server.url}/prefix/dashboard#/sessions/${sessionId}`);
    await page.locator("#session-view .view-header").getByText(sessionId).waitFor();
    await page.locator("#logs").waitFor({ state: "hidden" });
    await page.locator('#session-view [data-action="back"]').click();
    await page.locator(`[data-session-id="${sessionId}"]`).waitFor();
    expect(page.url()).toBe(`${server.url}/prefix/dashboard#/`);
    const paths = requests.map((request) => new URL(request.url()).pathname);
    expect(paths).toContain("/prefix/v1/servers/local/sessions");
    expect(paths).toContain(`/prefix/v1/servers/local/sessions/${sessionId}`);
    expect(paths).toContain("/prefix/v1/logs");
    expect(paths.filter((path) => !path.startsWith("/prefix/"))).toEqual([]);
  });
});

describe("Sessions and Turns", () => {
  it("lists Sessions and follows a running Turn live: status, streamed text, tool calls, outcome", async () => {
    const quiet = await server.createSession();
    const sessionId = await server.createSession();
    await unwrap(sdk.setSessionTitle({ client: server.api.client, path: { server: SERVER, sessionId }, body: { title: "Build check" } }));
    const { page } = await dashboard();
    await page.locator(`[data-session-id="${sessionId}"]`).getByText("Build check").waitFor();
    expect(await page.locator(`[data-session-id="${quiet}"] [data-status]`).getAttribute("data-status")).toBe("idle");

    // The grid follows the server stream: a Session created, titled and deleted after the page loaded.
    const later = await server.createSession();
    await page.locator(`[data-session-id="${later}"] [data-status="idle"]`).waitFor();
    await unwrap(sdk.setSessionTitle({ client: server.api.client, path: { server: SERVER, sessionId: later }, body: { title: "Arrived later" } }));
    await page.locator(`[data-session-id="${later}"]`).getByText("Arrived later").waitFor();
    await unwrap(sdk.deleteSession({ client: server.api.client, path: { server: SERVER, sessionId: later } }));
    await page.locator(`[data-session-id="${later}"]`).waitFor({ state: "detached" });

    await page.locator(`[data-session-id="${sessionId}"]`).click();
    await page.locator("#session-view .view-header").getByText("Build check").waitFor();

    // Round 1: text and a shell call (allowed by default); round 2 waits for the test.
    const release = deferred();
    let round = 0;
    server.model.reply(async () => {
      round += 1;
      if (round === 1) return { events: [{ type: "text", text: "Looking around first." }, { type: "tool_call", name: "shell", arguments: { command: "echo probe-5150" } }] };
      await release.promise;
      return { events: [{ type: "text", text: "The build is green and every check passed." }] };
    });
    const turnId = await server.submit(sessionId, "Check the build");
    const turn = page.locator(`[data-turn-id="${turnId}"]`);
    // Live, without a reload: the Turn appears, runs its tool, and waits on the model.
    await turn.getByText("Looking around first.").waitFor();
    await turn.locator('[data-tool-state="completed"] .tool-output').getByText(/probe-5150/).waitFor();
    expect(await turn.getAttribute("data-phase")).toBe("running");
    await page.locator(`[data-session-id="${sessionId}"] [data-status="running"]`).waitFor({ state: "attached" });
    expect(await turn.locator(".prompt").textContent()).toBe("Check the build");

    release.resolve();
    await turn.getByText("The build is green and every check passed.").waitFor();
    await turn.locator('[data-outcome="completed"]').waitFor();
    await page.locator(`[data-session-id="${sessionId}"] [data-status="completed"]`).waitFor({ state: "attached" });
    expect(await turn.getAttribute("data-phase")).toBe("completed");
    // One document load: everything after it came over the API.
    expect(current!.requests.filter((request) => request.resourceType() === "document")).toHaveLength(1);
    expect(current!.requests.some((request) => new URL(request.url()).pathname === `/v1/servers/local/sessions/${sessionId}/turns/${turnId}/events`)).toBe(true);
  });

  it("answers a permission request (a shell call under an `ask` rule) from the page; the Turn proceeds", async () => {
    const sessionId = await server.createSession({ permissions: [{ action: "shell", resource: "*", effect: "ask" }] });
    server.model.enqueue(
      { events: [{ type: "tool_call", name: "shell", arguments: { command: "echo approved-7731" } }] },
      { events: [{ type: "text", text: "The shell ran after approval." }] },
    );
    const turnId = await server.submit(sessionId, "Run the probe");
    const { page } = await dashboard();
    // The grid shows the pending approval from the server stream (or the latest Turn read).
    await page.locator(`[data-session-id="${sessionId}"] [data-status="approval"]`).waitFor();
    await page.locator(`[data-session-id="${sessionId}"]`).click();
    const request = page.locator(`[data-turn-id="${turnId}"] [data-permission-request-id]`);
    await request.getByText("shell").first().waitFor();
    expect(await request.textContent()).toContain("echo approved-7731");
    await request.locator('[data-reply="once"]').click();

    const turn = page.locator(`[data-turn-id="${turnId}"]`);
    await turn.locator('[data-outcome="completed"]').waitFor();
    await turn.getByText("The shell ran after approval.").waitFor();
    await page.locator(`[data-session-id="${sessionId}"] [data-status="completed"]`).waitFor({ state: "attached" });
    expect(await turn.locator("[data-permission-request-id]").count()).toBe(0);
    const { turn: final } = await unwrap(sdk.getTurn({ client: server.api.client, path: { server: SERVER, sessionId, turnId } }));
    const tool = final.parts.find((part): part is ToolTurnPart => part.type === "tool")!;
    expect(tool).toMatchObject({ toolId: "shell", state: "completed", approval: { state: "resolved", decision: "allow", source: "remote", reply: "once" } });
    expect(JSON.stringify(tool.canonicalResult ?? tool.output)).toContain("approved-7731");
    expect(await turn.locator('[data-tool-state="completed"] .tool-output').textContent()).toContain("approved-7731");
  });

  it("answers a question from the page with the chosen option", async () => {
    const sessionId = await server.createSession();
    const { page } = await dashboard();
    await page.locator(`[data-session-id="${sessionId}"]`).click();
    await page.locator("#session-view .view-header").waitFor();
    server.model.enqueue(
      {
        events: [
          {
            type: "tool_call",
            name: "question",
            arguments: { questions: [{ question: "Which colour?", header: "Colour", options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }] },
          },
        ],
      },
      { events: [{ type: "text", text: "Blue it is." }] },
    );
    const turnId = await server.submit(sessionId, "Ask me");
    const form = page.locator(`[data-turn-id="${turnId}"] [data-question-request-id]`);
    await form.getByText("Which colour?").waitFor();
    await page.locator(`[data-session-id="${sessionId}"] [data-status="question"]`).waitFor({ state: "attached" });
    await form.getByLabel(/Blue/).check();
    await form.locator('[data-answer="reply"]').click();
    const turn = page.locator(`[data-turn-id="${turnId}"]`);
    await turn.locator('[data-outcome="completed"]').waitFor();
    await turn.getByText("Answered: Blue").waitFor();
    const { turn: final } = await unwrap(sdk.getTurn({ client: server.api.client, path: { server: SERVER, sessionId, turnId } }));
    expect(final.parts.find((part): part is ToolTurnPart => part.type === "tool")?.question).toMatchObject({ state: "answered", answers: [["Blue"]] });
  });
});

describe("theme", () => {
  it("defines every --zh-* token on :root (dark by default) and applies only listed string tokens posted by the parent", async () => {
    current = await openPage(browser);
    const { page } = current;
    await page.goto(`${server.url}/v1/health`); // an origin to frame from: the host itself
    await page.setContent(`<iframe id="frame" src="${server.url}/dashboard" style="width:800px;height:600px"></iframe>`);
    const frame = await (await page.waitForSelector("#frame")).contentFrame();
    await frame!.locator("#live[data-state=live]").waitFor();
    const values = await frame!.evaluate((tokens) => {
      const style = getComputedStyle(document.documentElement);
      return Object.fromEntries(tokens.map((token) => [token, style.getPropertyValue(token).trim()]));
    }, [...THEME_TOKENS]);
    expect(THEME_TOKENS).toHaveLength(62);
    for (const token of THEME_TOKENS) expect(values[token], token).not.toBe("");
    expect(values["--zh-color-scheme"]).toBe("dark");
    expect(values["--zh-text-10-5"]).toBe("10.5px");
    expect(values["--zh-space-44"]).toBe("44px");
    expect(values["--zh-radius-8"]).toBe("8px");

    const read = (token: string) => frame!.evaluate((name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim(), token);
    const bodyBackground = () => frame!.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const before = await bodyBackground();
    // Ignored: the frame posting to itself, an unknown key, a non-string value, another type.
    await frame!.evaluate(() => window.postMessage({ type: "ze-harness:theme", tokens: { "--zh-bg": "#123456" } }, "*"));
    await page.evaluate(() => {
      const target = (document.getElementById("frame") as HTMLIFrameElement).contentWindow!;
      target.postMessage({ type: "ze-harness:theme", tokens: { "--zh-unknown": "#ffffff", "--zh-text": 42, background: "red" } }, "*");
      target.postMessage({ type: "other", tokens: { "--zh-panel": "#ffffff" } }, "*");
      // Applied (after the ignored ones, in order).
      target.postMessage({ type: "ze-harness:theme", tokens: { "--zh-bg": "#ffffff", "--zh-color-scheme": "light" } }, "*");
    });
    await expect.poll(() => read("--zh-bg")).toBe("#ffffff");
    expect(await bodyBackground()).toBe("rgb(255, 255, 255)");
    expect(before).not.toBe("rgb(255, 255, 255)");
    expect(await read("--zh-color-scheme")).toBe("light");
    expect(await read("--zh-unknown")).toBe("");
    expect(await read("--zh-text")).toBe(values["--zh-text"]);
    expect(await read("--zh-panel")).toBe(values["--zh-panel"]);
    // A later message overrides an earlier one.
    await page.evaluate(() => (document.getElementById("frame") as HTMLIFrameElement).contentWindow!.postMessage({ type: "ze-harness:theme", tokens: { "--zh-bg": "#fafafa" } }, "*"));
    await expect.poll(() => read("--zh-bg")).toBe("#fafafa");
  });
});
