// The daemon token never reaches a listener that is not the daemon. The attack: the daemon dies
// without cleanup (kill -9), another local user listens on its freed port and gets a process with
// the registered pid; before the fix the owner's next command sent `Authorization: Bearer <token>`
// to that listener and then started a new daemon with the same token. Now a registration whose
// pid is another user's is stale, every connection's listening end must be this user's (Linux
// socket table), the challenge must be answered before the token is sent, and the new daemon has
// a new token.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt } from "../support/cli.js";
import { otherUserAvailable, runAsOtherUser, type OtherUserProcess } from "../support/other-user.js";
import { alive, cleanupDaemonHome, daemonHome, waitUntil, type DaemonHome } from "../daemon/support.js";

/** A raw TCP listener that reports every connection and every byte it receives. */
const RECORDING_LISTENER = `
import { createServer } from "node:net";
const port = Number(process.argv[2]);
const server = createServer((socket) => {
  console.log(JSON.stringify({ connection: true }));
  socket.on("data", (data) => console.log(JSON.stringify({ data: data.toString("latin1") })));
  socket.on("error", () => {});
});
server.listen(port, "127.0.0.1", () => console.log(JSON.stringify({ listening: port, pid: process.pid })));
`;

let home: DaemonHome | undefined;
let model: TestModel | undefined;
let impostor: OtherUserProcess | undefined;
afterEach(async () => {
  await impostor?.stop();
  await cleanupDaemonHome(home);
  await model?.close();
  [home, model, impostor] = [undefined, undefined, undefined];
});

describe.runIf(otherUserAvailable)("a stale daemon registration taken over by another local user", () => {
  it("the owner's next command sends the impostor nothing, starts a new daemon elsewhere with a new token, and never signals the impostor", async () => {
    assertBuilt();
    model = await startTestModel();
    home = daemonHome(model);
    const h = home;
    expect(await h.cli(["session", "list"])).toMatchObject({ code: 0 });
    const first = h.registration()!;
    const oldToken = h.token();

    // The daemon dies without cleanup: server.json and daemon-token stay behind.
    process.kill(first.pid, "SIGKILL");
    await waitUntil(() => !alive(first.pid), "the daemon to die");
    const port = Number(new URL(first.url).port);
    impostor = runAsOtherUser(RECORDING_LISTENER, [String(port)]);
    const listening = await impostor.line((line) => line["listening"] === port, "listening");
    // The impostor has the registered pid (in the attack it forks until it gets it).
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ ...first, pid: listening["pid"] }), { mode: 0o600 });

    const result = await h.cli(["session", "list"]);
    expect(result).toMatchObject({ code: 0 });
    const received = impostor.lines.filter((line) => typeof line["data"] === "string").map((line) => line["data"] as string).join("");
    expect(received).not.toContain(oldToken);
    // Not even a request line: the connection is refused before a byte is written.
    expect(received).toBe("");

    const second = h.registration()!;
    expect(second.id).not.toBe(first.id);
    expect(second.pid).not.toBe(listening["pid"]);
    expect(second.url).not.toBe(first.url);
    expect(alive(second.pid)).toBe(true);
    const newToken = h.token();
    expect(newToken).not.toBe(oldToken);
    const withOld = await fetch(`${second.url}/v1/servers/local/sessions`, { headers: { authorization: `Bearer ${oldToken}` } });
    expect(withOld.status).toBe(401);
    const withNew = await fetch(`${second.url}/v1/servers/local/sessions`, { headers: { authorization: `Bearer ${newToken}` } });
    expect(withNew.status).toBe(200);

    // Stopping the service ends our daemon only: the impostor's pid is not ours to signal.
    expect(await h.cli(["service", "stop"])).toMatchObject({ code: 0 });
    expect(alive(second.pid)).toBe(false);
    expect(alive(impostor.pid)).toBe(true);
  });

  it("service stop never signals another user's process named by a registration", async () => {
    assertBuilt();
    home = daemonHome();
    const h = home;
    impostor = runAsOtherUser(`setInterval(() => {}, 1000); console.log(JSON.stringify({ ready: process.pid }));`);
    const ready = await impostor.line((line) => typeof line["ready"] === "number", "ready");
    mkdirSync(h.stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(h.stateDir, "server.json"), JSON.stringify({ id: "foreign", version: "0.1.0", url: "http://127.0.0.1:9", pid: ready["ready"] }), { mode: 0o600 });
    const stopped = await h.cli(["service", "stop"]);
    expect(stopped).toMatchObject({ code: 0 });
    // Judged stale (nothing was running) and reaped; the foreign process is left alone.
    expect(JSON.parse(stopped.stdout)).toEqual({ stopped: false, endedTurns: [] });
    expect(h.registration()).toBeUndefined();
    expect(alive(impostor.pid)).toBe(true);
  });
});
