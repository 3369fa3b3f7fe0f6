// The /dashboard route of the Fetch handler, in process: public even when a token is demanded,
// exactly GET (and HEAD) /dashboard, the server name escaped into the identity meta tag only,
// and a checkout that was never built answering a plain page under a script-less policy.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dashboardAsset } from "../../services/host/dashboard.js";
import { dashboardCsp, dashboardResponse, isDashboardRequest } from "../../services/http/dashboard.js";
import { startHarness, tempHome } from "../support/harness.js";

describe("the /dashboard route", () => {
  it("is public on a host that demands a token, and answers only GET/HEAD /dashboard", async () => {
    const h = await startHarness({ token: "in-process-token" });
    try {
      const page = await h.harness.fetch(new Request("http://localhost/dashboard"));
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'none'; style-src 'unsafe-inline'; script-src '(sha256-[A-Za-z0-9+/]+=*|none)'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'$/);
      expect(page.headers.get("ze-harness-version")).toMatch(/^2\//);
      expect(await page.text()).toContain('<meta name="ze-harness-server" content="local">');
      expect((await h.harness.fetch(new Request("http://localhost/v1/servers/local/sessions"))).status).toBe(401);
      expect((await h.harness.fetch(new Request("http://localhost/dashboard?x=1"))).status).toBe(200);
      expect((await h.harness.fetch(new Request("http://localhost/dashboard/x"))).status).toBe(404);
      expect((await h.harness.fetch(new Request("http://localhost/dashboard", { method: "DELETE" }))).status).toBe(404);
    } finally {
      await h.close();
    }
  });

  it("puts the server name, escaped, into the meta tag and nowhere else", async () => {
    const asset = () => ({ html: '<meta name="ze-harness-server" content="%ZE_HARNESS_SERVER%"><script>x("%ZE_HARNESS_SERVER%")</script>', scriptHash: "sha256-abc=" });
    const response = dashboardResponse({ server: 'a"b<c>&', asset });
    expect(await response.text()).toBe('<meta name="ze-harness-server" content="a&quot;b&lt;c&gt;&amp;"><script>x("%ZE_HARNESS_SERVER%")</script>');
    expect(response.headers.get("content-security-policy")).toBe(dashboardCsp("sha256-abc="));
    expect(dashboardCsp("sha256-abc=")).toBe("default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-abc='; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'");
    expect(dashboardCsp("sha256-abc=", ["https://intranet.example"])).toMatch(/; frame-ancestors 'self' https:\/\/intranet\.example$/);
    expect(isDashboardRequest("GET", new URL("http://h/dashboard"))).toBe(true);
    expect(isDashboardRequest("GET", new URL("http://h/x/dashboard"))).toBe(false);
    expect(isDashboardRequest("POST", new URL("http://h/dashboard"))).toBe(false);
  });

  it("serves a plain page without script when the asset was never built", async () => {
    const home = tempHome();
    try {
      const asset = dashboardAsset(join(home.dir, "missing", "dashboard.json"))();
      expect(asset.scriptHash).toBeUndefined();
      const response = dashboardResponse({ server: "local", asset: () => asset });
      expect(response.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'; script-src 'none'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'");
    expect(dashboardCsp("sha256-abc=", ["https://intranet.example"])).toMatch(/; frame-ancestors 'self' https:\/\/intranet\.example$/);
      const html = await response.text();
      expect(html).toContain("npm run build");
      expect(html).not.toContain("<script");
    } finally {
      home.cleanup();
    }
  });
});
