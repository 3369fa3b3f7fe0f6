// server.json and daemon-token on real files: the first live registration wins, a dead one is
// replaced, removal is by id, each token is new and written whole (0600); release order.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { compareReleases } from "../../services/daemon/client.js";
import { claimRegistration, newToken, readRegistration, readToken, writeToken, removeRegistration, removeStaleRegistration } from "../../services/daemon/registration.js";

let dir: string | undefined;
const path = (name: string): string => join((dir ??= mkdtempSync(join(tmpdir(), "ze-daemon-reg-"))), name);
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const DEAD = 2 ** 22 + 11; // above pid_max: no process

describe("server.json", () => {
  it("the first live registration wins; a dead one is replaced; removal is by id", () => {
    const file = path("server.json");
    const live = { id: "a", version: "0.1.0", url: "http://127.0.0.1:4096", pid: process.pid };
    expect(claimRegistration(file, live)).toEqual({ ok: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readRegistration(file)).toEqual(live);
    const racer = { id: "b", version: "0.1.0", url: "http://127.0.0.1:4097", pid: process.pid };
    expect(claimRegistration(file, racer)).toEqual({ ok: false, holder: live });
    expect(readRegistration(file)).toEqual(live);
    expect(removeRegistration(file, "b")).toBe(false);
    expect(removeRegistration(file, "a")).toBe(true);
    expect(readRegistration(file)).toBeUndefined();

    writeFileSync(file, JSON.stringify({ ...live, id: "dead", pid: DEAD }));
    expect(claimRegistration(file, racer)).toEqual({ ok: true });
    expect(readRegistration(file)).toEqual(racer);
    // A stale judgement about another registration leaves the current one alone.
    removeStaleRegistration(file, { ...live, id: "dead", pid: DEAD });
    expect(readRegistration(file)).toEqual(racer);
    writeFileSync(file, "{ torn");
    expect(readRegistration(file)).toBeUndefined();
    expect(claimRegistration(file, live)).toEqual({ ok: true });
  });
});

describe("daemon-token", () => {
  it("is 32 random bytes, written whole with mode 0600 and replaced by the next one", () => {
    const file = path("daemon-token");
    const token = newToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    writeToken(file, token);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readToken(file)).toBe(token);
    const next = newToken();
    expect(next).not.toBe(token);
    writeToken(file, next);
    expect(readToken(file)).toBe(next);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe("release order", () => {
  it.each([
    ["0.1.0", "0.2.0", -1],
    ["0.10.0", "0.9.3", 1],
    ["1.0.0", "1.0.0", 0],
    ["1.0", "1.0.1", -1],
  ])("%s vs %s", (a, b, expected) => expect(compareReleases(a, b)).toBe(expected));
});
