// Every daemon has a new token, and a client that outlives one (the TUI, `chat`) follows the
// registration to the next: its daemon fetch re-finds and re-proves the registered daemon when
// its connection is refused or its token is no longer accepted, and resends the request once.
import { afterEach, describe, expect, it } from "vitest";
import { createZeClient, sdk, unwrap } from "../../clients/index.js";
import { connectDaemon } from "../../services/daemon/client.js";
import { assertBuilt } from "../support/cli.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "../daemon/support.js";

let home: DaemonHome | undefined;
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

describe("a client connected to the daemon across service restart", () => {
  it("goes on working against the new daemon and its new token", async () => {
    assertBuilt();
    home = daemonHome();
    const h = home;
    const endpoint = await connectDaemon({ env: h.env, cwd: h.root });
    const client = createZeClient({ baseUrl: endpoint.url, fetch: endpoint.fetch });
    const sessionId = crypto.randomUUID();
    await unwrap(sdk.createSession({ client: client.client, path: { server: "local", sessionId }, body: {} }));
    const before = { registration: h.registration()!, token: h.token() };

    expect(await h.cli(["service", "restart"])).toMatchObject({ code: 0 });
    const after = { registration: h.registration()!, token: h.token() };
    expect(after.registration.id).not.toBe(before.registration.id);
    expect(after.token).not.toBe(before.token);

    const { session } = await unwrap(sdk.getSession({ client: client.client, path: { server: "local", sessionId } }));
    expect(session.id).toBe(sessionId);
    // The old token is dead.
    const stale = await fetch(`${after.registration.url}/v1/servers/local/sessions`, { headers: { authorization: `Bearer ${before.token}` } });
    expect(stale.status).toBe(401);
  });
});
