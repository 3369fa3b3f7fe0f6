// The dashboard's log panel in Chromium: it hides where v1/logs answers 503 (a plain serve) or
// 404; on a daemon's answer (a same-origin stand-in here; tests/dashboard/daemon.test.ts reads
// the real daemon's) it asks for info and above by default and leaves out the connection lines
// (`client.connect` / `client.disconnect`) until the Connections toggle is on; the level floor
// and the pause toggle work.
import { describe, expect, it } from "vitest";
import { dashboardSuite } from "./suite.js";

const suite = dashboardSuite();

const entry = (level: string, event: string, fields: Record<string, string> = {}) => ({
  timestamp: "2026-09-29T07:00:00.000Z",
  level,
  run: "a1b2c3d4",
  service: "daemon",
  event,
  fields,
});

describe("the log panel", () => {
  it("hides when v1/logs answers 503 (a plain serve keeps no daemon log)", async () => {
    const { page, requests } = await suite.open();
    await page.locator("#logs").waitFor({ state: "hidden" });
    expect(requests.some((request) => new URL(request.url()).pathname === "/v1/logs")).toBe(true);
  });

  it("shows info and above without connection lines by default, shows them on the toggle, filters by level, pauses, and hides on 404", async () => {
    const { server } = suite;
    const { page } = await suite.page();
    const levels: (string | null)[] = [];
    let missing = false;
    // A daemon's answer, same origin: this host's own /v1/logs is 503 (only the daemon keeps a log).
    await page.route((url) => url.origin === server.origin && url.pathname === "/v1/logs", (route) => {
      const level = new URL(route.request().url()).searchParams.get("level");
      levels.push(level);
      if (missing) return route.fulfill({ status: 404, contentType: "application/json", body: JSON.stringify({ _tag: "NotFoundError", message: "No endpoint" }) });
      const entries =
        level === "warn" ? [entry("warn", "trim.warned")]
        : [
            entry("info", "client.connect", { remotePort: "51234" }),
            entry("info", "turn.submitted", { session: "s-1" }),
            entry("info", "client.disconnect", { remotePort: "51234", durationMs: "12" }),
            entry("warn", "trim.warned"),
            ...(level === null ? [entry("debug", "cache.hit")] : []),
          ];
      return route.fulfill({ contentType: "application/json", body: JSON.stringify({ entries, truncated: level !== "warn" }) });
    });
    await page.goto(`${server.url}/dashboard`);
    const events = () => page.locator("#log-entries [data-level]").evaluateAll((items) => items.map((item) => item.textContent!.match(/daemon (\S+)/)![1]));

    // By default: the floor is info, and the two connection lines are left out (and counted).
    await page.locator("#log-entries").getByText("turn.submitted").waitFor();
    expect(levels[0]).toBe("info");
    expect(await page.locator("#log-level").inputValue()).toBe("info");
    expect(await page.locator("#log-connections").isChecked()).toBe(false);
    expect(await events()).toEqual(["turn.submitted", "trim.warned"]);
    expect(await page.locator("#log-note").textContent()).toBe("2 connection lines hidden. Older entries exist beyond this page.");
    expect(await page.locator("#log-entries").textContent()).not.toContain("remotePort=51234");

    // The toggle shows them, in the server's order, with their fields.
    await page.locator("#log-connections").check();
    await expect.poll(events).toEqual(["client.connect", "turn.submitted", "client.disconnect", "trim.warned"]);
    expect(await page.locator("#log-entries").textContent()).toContain("remotePort=51234");
    expect(await page.locator("#log-note").textContent()).toBe("Older entries exist beyond this page.");
    await page.locator("#log-connections").uncheck();
    await expect.poll(events).toEqual(["turn.submitted", "trim.warned"]);

    // Every level: the debug line comes in (the floor is the server's: the query has no level).
    await page.locator("#log-level").selectOption("");
    await expect.poll(events).toEqual(["turn.submitted", "trim.warned", "cache.hit"]);
    expect(levels.at(-1)).toBeNull();

    await page.locator("#log-level").selectOption("warn");
    await expect.poll(events).toEqual(["trim.warned"]);
    expect(levels.at(-1)).toBe("warn");

    await page.locator("#log-pause").click();
    expect(await page.locator("#log-pause").getAttribute("aria-pressed")).toBe("true");
    const asked = levels.length;
    missing = true;
    await page.locator("#log-pause").click(); // resume: polls at once
    await page.locator("#logs").waitFor({ state: "hidden" });
    expect(levels.length).toBe(asked + 1);
  });
});
