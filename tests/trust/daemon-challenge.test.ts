// The daemon proves itself before it is given the token: an HMAC under the token of its id, its
// own URL and the client's nonce. A listener that cannot answer (same user or not, with or
// without a socket table to tell) never sees the token; a proof relayed from the real daemon on
// another port does not verify; the control plane's errors carry no stack traces.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHALLENGE_PATH, challengeProof, newNonce, verifyProof } from "../../services/daemon/challenge.js";
import { controlHandler, type DaemonControl } from "../../services/daemon/router.js";
import { assertBuilt } from "../support/cli.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "../daemon/support.js";

const claim = { id: "daemon-1", url: "http://127.0.0.1:4096", nonce: newNonce() };

describe("the proof", () => {
  it("verifies only for the token, id, URL and nonce it was made for", () => {
    const proof = challengeProof("secret", claim);
    expect(verifyProof("secret", claim, { id: claim.id, proof })).toBe(true);
    // The real daemon on another port answering a relayed challenge signs its own URL.
    const relayed = challengeProof("secret", { ...claim, url: "http://127.0.0.1:4097" });
    expect(verifyProof("secret", claim, { id: claim.id, proof: relayed })).toBe(false);
    expect(verifyProof("other", claim, { id: claim.id, proof })).toBe(false);
    expect(verifyProof("secret", { ...claim, nonce: newNonce() }, { id: claim.id, proof })).toBe(false);
    expect(verifyProof("secret", { ...claim, id: "daemon-2" }, { id: "daemon-2", proof })).toBe(false);
    for (const answer of [null, "x", {}, { id: claim.id }, { id: claim.id, proof: 1 }, { id: claim.id, proof: proof.slice(1) }]) {
      expect(verifyProof("secret", claim, answer)).toBe(false);
    }
  });
});

describe("the control plane", () => {
  const control: DaemonControl = {
    status: () => ({ id: claim.id, version: "0", url: claim.url, pid: 1, run: "r", database: "d", config: null, serverRoot: "/", startedAt: "", uptimeMs: 0, registered: true, runningTurns: [] }),
    runningTurns: () => [],
    heartbeat: () => ({ registered: true, checkedAt: "" }),
    shutdown: () => ({ accepted: true, turns: [] }),
  };
  const handle = controlHandler(control, { token: "secret" });
  const get = (path: string, headers: Record<string, string> = {}) => handle(new Request(`http://127.0.0.1:4096${path}`, { headers: { host: "127.0.0.1:4096", ...headers } }));

  it("answers the challenge without the token, with a proof of its own URL", async () => {
    const nonce = newNonce();
    const response = await get(`${CHALLENGE_PATH}?nonce=${nonce}`);
    expect(response.status).toBe(200);
    expect(verifyProof("secret", { ...claim, nonce }, await response.json())).toBe(true);
    expect((await get(`${CHALLENGE_PATH}?nonce=short`)).status).toBe(400);
    expect((await get(CHALLENGE_PATH)).status).toBe(400);
    expect((await get("/_daemon/status")).status).toBe(401);
  });

  it("errors carry a safe message, never a stack trace", async () => {
    const response = await handle(
      new Request("http://127.0.0.1:4096/_daemon/shutdown", {
        method: "POST",
        headers: { host: "127.0.0.1:4096", authorization: "Bearer secret", "content-type": "application/json" },
        body: JSON.stringify({ reason: "" }),
      }),
    );
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).not.toMatch(/stack|\.ts:|\.js:|node_modules|at /);
    const missing = await get("/_daemon/nothing", { authorization: "Bearer secret" });
    expect(missing.status).toBe(404);
    expect(await missing.text()).not.toMatch(/stack|\.ts:|\.js:/);
  });
});

let home: DaemonHome | undefined;
let closeFake: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeFake?.();
  await cleanupDaemonHome(home);
  [home, closeFake] = [undefined, undefined];
});

describe("a registered listener that cannot prove itself", () => {
  it("gets the challenge, never the token, and is replaced by a new daemon", async () => {
    assertBuilt();
    home = daemonHome();
    const h = home;
    // Same user (this process), so no socket table can tell it apart: only the challenge can.
    const seen: { path: string; authorization: string | undefined }[] = [];
    const fake = createServer((request: IncomingMessage, response) => {
      seen.push({ path: request.url ?? "", authorization: request.headers.authorization });
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "fake", proof: "nope", result: { data: {} } }));
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    closeFake = () => new Promise((resolve) => fake.close(() => resolve()));
    const url = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
    mkdirSync(h.stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ id: "fake", version: "0.1.0", url, pid: process.pid }), { mode: 0o600 });
    writeFileSync(join(h.stateDir, "daemon-token"), "the-old-token\n", { mode: 0o600 });

    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0 });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((request) => request.path.startsWith(`${CHALLENGE_PATH}?nonce=`) && request.authorization === undefined)).toBe(true);
    const registration = h.registration()!;
    expect(registration.url).not.toBe(url);
    expect(h.token()).not.toBe("the-old-token");
  });
});
