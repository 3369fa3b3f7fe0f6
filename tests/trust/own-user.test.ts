// A tokenless loopback `serve` is its user's alone. Before, any local user could
// `PUT …/sessions/X {"workdir":"/root"}` on it and open a terminal as the server's user. Now a
// connection whose socket another user opened is answered 403 ForbiddenError before any handler
// runs; the server's own user is served as the reference says; a token server serves whoever
// presents the token; and the server says at start, on stderr, that it is unauthenticated.
import { afterEach, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { otherUserAvailable, runAsOtherUser, type OtherUserProcess } from "../support/other-user.js";

/** Calls the server as another user: health, then a Session in /root, then a terminal in it. */
const INTRUDER = `
const [base, token] = [process.argv[2], process.argv[3]];
const id = crypto.randomUUID();
const headers = { "content-type": "application/json", ...(token ? { authorization: "Bearer " + token } : {}) };
const answer = async (response) => ({ status: response.status, body: await response.json().catch(() => null) });
const health = await answer(await fetch(base + "/v1/health", { headers }));
const list = await answer(await fetch(base + "/v1/servers/local/sessions", { headers }));
const session = await answer(await fetch(base + "/v1/servers/local/sessions/" + id, { method: "PUT", headers, body: JSON.stringify({ workdir: "/root" }) }));
const terminal = await answer(await fetch(base + "/v1/servers/local/sessions/" + id + "/terminals", { method: "POST", headers, body: JSON.stringify({ command: "id" }) }));
console.log(JSON.stringify({ id, health, list, session, terminal }));
`;

let home: TempHome | undefined;
let serve: ServeProcess | undefined;
let intruder: OtherUserProcess | undefined;
afterEach(async () => {
  await intruder?.stop();
  await serve?.stop();
  home?.cleanup();
  [home, serve, intruder] = [undefined, undefined, undefined];
});

const result = async (process: OtherUserProcess) => (await process.line((line) => "health" in line, "its calls")) as Record<"health" | "list" | "session" | "terminal", { status: number; body: { _tag?: string } | null }>;

describe("a tokenless serve", () => {
  it("says on stderr that it serves without a token, and serves its own user", async () => {
    assertBuilt();
    home = tempHome("ze-own-user-");
    serve = await startServe(["--root", home.root], home.env, home.root);
    expect((await fetch(`${serve.url}/v1/health`)).status).toBe(200);
    expect(serve.stderr()).toMatch(/^timestamp=\S+ level=WARN run=\w+ service=server event=server\.unauthenticated message="serving without a token: .*ZE_HARNESS_TOKEN/m);
  });

  it.runIf(otherUserAvailable)("answers every call of another local user 403 ForbiddenError: no Session, no terminal", async () => {
    assertBuilt();
    home = tempHome("ze-own-user-");
    serve = await startServe(["--root", home.root], home.env, home.root);
    intruder = runAsOtherUser(INTRUDER, [serve.url]);
    const calls = await result(intruder);
    for (const call of [calls.health, calls.list, calls.session, calls.terminal]) {
      expect(call.status).toBe(403);
      expect(call.body?._tag).toBe("ForbiddenError");
    }
    // Nothing was created: the owner sees no Session.
    const listed = (await (await fetch(`${serve.url}/v1/servers/local/sessions?all=true`)).json()) as { items?: unknown[]; sessions?: unknown[] };
    expect(JSON.stringify(listed)).not.toContain(String(intruder.lines.at(-1)!["id"]));
  });
});

describe.runIf(otherUserAvailable)("a serve with a token", () => {
  it("serves another local user who presents the token, and refuses one who does not (401)", async () => {
    assertBuilt();
    home = tempHome("ze-own-user-");
    serve = await startServe(["--root", home.root], { ...home.env, ZE_HARNESS_TOKEN: "shared-secret" }, home.root);
    expect(serve.stderr()).not.toMatch(/serving without a token/);
    intruder = runAsOtherUser(INTRUDER, [serve.url]);
    expect((await result(intruder)).list.status).toBe(401);
    await intruder.stop();
    intruder = runAsOtherUser(INTRUDER, [serve.url, "shared-secret"]);
    const calls = await result(intruder);
    expect(calls.list.status).toBe(200);
    expect(calls.session.status).toBe(200);
  });
});
