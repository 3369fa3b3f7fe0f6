// Route matching against the generated route table (services/http/router.ts): a path is tried
// only against routes of its length, literals first, and matched exactly as written.
import { describe, expect, it } from "vitest";
import { routes } from "../../generated/server/routes.js";
import { Router } from "../../services/http/router.js";

const router = new Router(routes);
const session = "54894b06-dd0f-4a56-9379-76fc3ea72960";
const turn = "a66faef2-768c-4a5c-83cb-41141e34431b";

function matched(method: string, path: string): { operationId: string; params: Record<string, string> } | string {
  const lookup = router.lookup(method, path);
  return lookup.kind === "matched" ? { operationId: lookup.match.route.operationId, params: lookup.match.params } : lookup.kind;
}

describe("the router", () => {
  it("matches a route and decodes its parameters", () => {
    expect(matched("POST", `/v1/servers/local/sessions/${session}/prompts`)).toEqual({ operationId: "submitPrompt", params: { server: "local", sessionId: session } });
    expect(matched("GET", `/v1/servers/local/sessions/${session}/turns/${turn}/events`)).toEqual({
      operationId: "watchTurn",
      params: { server: "local", sessionId: session, turnId: turn },
    });
    expect(matched("GET", `/v1/servers/a%20b/sessions/${session}`)).toMatchObject({ operationId: "getSession", params: { server: "a b" } });
  });

  it("tells apart routes of one length by their literals and their methods", () => {
    // `…/permissions/saved/{savedPermissionId}` and `…/permissions/{permissionRequestId}/reply` both match this path.
    const path = `/v1/servers/local/sessions/${session}/permissions/saved/reply`;
    expect(matched("DELETE", path)).toMatchObject({ operationId: "removeSavedPermission", params: { savedPermissionId: "reply" } });
    expect(matched("POST", path)).toMatchObject({ operationId: "replyPermission", params: { permissionRequestId: "saved" } });
    const lookup = router.lookup("GET", path);
    expect(lookup.kind === "method_not_allowed" ? [...lookup.allowed].sort() : lookup).toEqual(["DELETE", "POST"]);
    expect(matched("GET", `/v1/servers/local/sessions/${session}/permissions/saved`)).toMatchObject({ operationId: "listSavedPermissions" });
  });

  it("answers method_not_allowed with the methods the path has, and not_found for no path", () => {
    const lookup = router.lookup("PATCH", `/v1/servers/local/sessions/${session}/prompts`);
    expect(lookup).toEqual({ kind: "method_not_allowed", allowed: ["POST"] });
    expect(matched("GET", "/v1/nothing/here")).toBe("not_found");
  });

  it("matches a path only as written: empty segments, a trailing slash and undecodable parameters match nothing", () => {
    expect(matched("GET", "/v1/health")).toMatchObject({ operationId: "health" });
    expect(matched("GET", "//v1//health")).toBe("not_found");
    expect(matched("GET", "/v1/health/")).toBe("not_found");
    expect(matched("GET", `/v1/servers/%E0%A4%A/sessions/${session}`)).toBe("not_found");
  });
});
