// A Session view is a route of its own in Chromium: a card is a link to `#/sessions/<id>`, the
// view opens at the top of the viewport with the grid hidden (even for the last of 35 Sessions),
// back and forward open and close it, a pasted link opens it directly (or says why not), and the
// back link returns to the grid. Plus a screenshot of a Session view at 1400×900, written to
// .tmp/dashboard-session.png for review.
import { mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sdk, unwrap } from "../../clients/index.js";
import { repoRoot } from "../support/harness.js";
import { SERVER } from "./support.js";
import { dashboardSuite } from "./suite.js";

const suite = dashboardSuite();
const VIEWPORT = { width: 1400, height: 900 };

const title = (sessionId: string, text: string) =>
  unwrap(sdk.setSessionTitle({ client: suite.server.api.client, path: { server: SERVER, sessionId }, body: { title: text } }));

describe("a Session's own URL", () => {
  it("opens a card's Session at #/sessions/<id> at the top of the page, grid hidden; back, forward and the back link work", async () => {
    const { server } = suite;
    // The oldest of 35 Sessions: its card is the last of the grid, far below the fold.
    const oldest = await server.createSession();
    await title(oldest, "The oldest Session");
    for (let index = 0; index < 34; index += 1) await server.createSession();
    // A laptop-sized window: 35 cards run well below the fold.
    const { page, requests } = await suite.open("", { viewport: { width: 1100, height: 700 } });
    const card = page.locator(`[data-session-id="${oldest}"]`);
    await card.getByText("The oldest Session").waitFor();
    expect(await page.locator("#sessions [data-session-id]").count()).toBeGreaterThanOrEqual(35);
    expect(await card.getAttribute("href")).toBe(`#/sessions/${oldest}`);
    await card.scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);

    await card.click();
    await page.locator("#session-view .view-header").getByText("The oldest Session").waitFor();
    expect(new URL(page.url()).hash).toBe(`#/sessions/${oldest}`);
    expect(await page.locator("#sessions-section").isHidden()).toBe(true);
    // At the top of the viewport, header first.
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    const box = (await page.locator("#session-view").boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y).toBeLessThan(120);
    expect(await page.title()).toBe("The oldest Session — Ze Harness");

    // Back: the grid again, scrolled where it was; forward: the Session again.
    await page.goBack();
    await page.locator("#sessions-section").waitFor();
    expect(new URL(page.url()).hash).toBe("");
    expect(await page.locator("#session-view").isHidden()).toBe(true);
    expect(await card.isVisible()).toBe(true);
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    expect(await page.title()).toBe("Ze Harness");
    await page.goForward();
    await page.locator("#session-view .view-header").getByText("The oldest Session").waitFor();
    expect(await page.locator("#sessions-section").isHidden()).toBe(true);

    // The back link goes to the grid (a history entry of its own).
    await page.locator('#session-view [data-action="back"]').click();
    await page.locator("#sessions-section").waitFor();
    expect(new URL(page.url()).hash).toBe("#/");
    expect(await page.locator("#session-view").isHidden()).toBe(true);
    expect(await page.locator(`[data-session-id="${oldest}"].selected`).count()).toBe(1);
    await page.goBack();
    await page.locator("#session-view .view-header").getByText("The oldest Session").waitFor();
    // One document load: every route change stayed in the page.
    expect(requests.filter((request) => request.resourceType() === "document")).toHaveLength(1);
  });

  it("opens a pasted link straight into its Session, and says why an unknown one cannot open", async () => {
    const { server } = suite;
    const sessionId = await server.createSession();
    await title(sessionId, "Linked Session");
    const turnId = await server.submit(sessionId, "Linked prompt");
    const { page, requests } = await suite.open(`#/sessions/${sessionId}`);
    const turn = page.locator(`[data-turn-id="${turnId}"]`);
    await turn.locator('[data-outcome="completed"]').waitFor();
    expect(await turn.locator(".prompt").textContent()).toBe("Linked prompt");
    expect(await page.locator("#session-view .view-header h2").textContent()).toBe("Linked Session");
    expect(await page.locator("#sessions-section").isHidden()).toBe(true);
    expect(requests.filter((request) => request.resourceType() === "document")).toHaveLength(1);
    expect(requests.some((request) => new URL(request.url()).pathname === `/v1/servers/local/sessions/${sessionId}`)).toBe(true);

    // Editing the fragment by hand is a route change too: an unknown Session says so.
    const unknown = "00000000-0000-4000-8000-000000000000";
    await page.evaluate((id) => (location.hash = `#/sessions/${id}`), unknown);
    const error = page.locator("#session-view [role=alert]");
    await error.getByText("Cannot open the Session").waitFor();
    expect(await error.textContent()).toContain("NotFoundError");
    await page.locator('#session-view [data-action="back"]').click();
    await page.locator(`[data-session-id="${sessionId}"]`).waitFor();
  });
});

describe("the Session view at 1400×900", () => {
  it("renders a screenshot of a Session with a finished Turn, a tool call awaiting approval and a draft", async () => {
    const { server } = suite;
    const file = join(repoRoot, ".tmp", "dashboard-session.png");
    mkdirSync(join(repoRoot, ".tmp"), { recursive: true });
    rmSync(file, { force: true });
    const sessionId = await server.createSession({ permissions: [{ action: "shell", resource: "npm test*", effect: "ask" }] });
    await title(sessionId, "Fix the flaky build");
    server.model.enqueue(
      { events: [{ type: "text", text: "I'll look at the CI configuration first." }, { type: "tool_call", name: "shell", arguments: { command: "echo 'node 20 · 412 tests'" } }] },
      { events: [{ type: "text", text: "The suite runs on Node 20 with 412 tests. The flaky one waits on a timer; I'll run it in isolation next." }] },
      { events: [{ type: "text", text: "Running the suspect test alone." }, { type: "tool_call", name: "shell", arguments: { command: "npm test -- watch.test.ts" } }] },
    );
    const first = await server.submit(sessionId, "Why does the build fail on CI but not locally?");
    const second = await server.submit(sessionId, "Run the failing test on its own");
    const { page } = await suite.open(`#/sessions/${sessionId}`, { viewport: VIEWPORT });
    await page.locator(`[data-turn-id="${first}"] [data-outcome="completed"]`).waitFor();
    await page.locator(`[data-turn-id="${second}"] [data-permission-request-id]`).waitFor();
    await page.locator("#prompt").fill("Also check whether the timer uses fake time.");
    await page.locator('[data-composer-state="running"]').waitFor();
    await page.screenshot({ path: file });

    const png = readFileSync(file);
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);
    expect(statSync(file).size).toBeGreaterThan(20_000);
    // What the picture shows: the view at the top (grid hidden), both Turns, the approval, the composer in view.
    expect(await page.locator("#sessions-section").isHidden()).toBe(true);
    expect((await page.locator("#session-view").boundingBox())!.y).toBeLessThan(120);
    expect(await page.locator('[data-action="send"]').textContent()).toBe("Queue");
    expect(await page.locator('[data-action="steer"]').isEnabled()).toBe(true);
    expect(await page.locator('[data-action="cancel"]').isEnabled()).toBe(true);
    const composer = (await page.locator(".composer").boundingBox())!;
    expect(composer.y + composer.height).toBeLessThanOrEqual(VIEWPORT.height + 1);

    // Leave nothing running: reject the request; the Turn ends.
    await page.locator(`[data-turn-id="${second}"] [data-reply="reject"]`).click();
    await page.locator(`[data-turn-id="${second}"] [data-outcome]`).waitFor();
  });
});
