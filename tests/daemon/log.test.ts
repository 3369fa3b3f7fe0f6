// The daemon log's pieces on real files: logfmt lines out and back, the reader's page (newest
// first, level floor, limit, truncation, skipped non-entries) and the in-place trim.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatLogLine, openDaemonLog, parseLogLine, readLogPage, trimLog } from "../../services/daemon/log.js";

let dir: string | undefined;
const file = (): string => join((dir ??= mkdtempSync(join(tmpdir(), "ze-daemon-log-"))), "daemon.log");
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("logfmt lines", () => {
  it("carry the fixed prefix, quote what needs quoting, and parse back", () => {
    const line = formatLogLine({ timestamp: "2026-09-29T07:00:00.000Z", level: "info", run: "a1b2c3d4", service: "daemon", event: "client.connect", fields: { connectionId: "x-1", note: 'two words "q"', empty: "", skipped: undefined, "bad key": "v", level: "forged" } });
    expect(line).toBe('timestamp=2026-09-29T07:00:00.000Z level=INFO run=a1b2c3d4 service=daemon event=client.connect connectionId=x-1 note="two words \\"q\\"" empty=""\n');
    expect(parseLogLine(line.trimEnd())).toEqual({ timestamp: "2026-09-29T07:00:00.000Z", level: "info", run: "a1b2c3d4", service: "daemon", event: "client.connect", fields: { connectionId: "x-1", note: 'two words "q"', empty: "" } });
  });

  it.each(["http://127.0.0.1:4096", "", "timestamp=2026-09-29T07:00:00.000Z level=INFO run=r service=daemon", 'timestamp=2026-09-29T07:00:00.000Z level=INFO run=r service=daemon event="torn', "timestamp=nope level=INFO run=r service=s event=e", "error: ConfigInvalid: bad"])(
    "%j is not an entry",
    (text) => expect(parseLogLine(text)).toBeUndefined(),
  );
});

describe("the reader", () => {
  it("pages newest first above a level floor, up to limit, and says when older entries exist", () => {
    const log = openDaemonLog(file(), { run: "00000001" });
    log.info("first");
    log.warn("second");
    appendFileSync(file(), "http://127.0.0.1:4096\n");
    log.error("third", { code: 7 });
    log.info("fourth");
    log.close();
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(readLogPage(file()).entries.map((entry) => entry.event)).toEqual(["fourth", "third", "second", "first"]);
    expect(readLogPage(file())).toMatchObject({ truncated: false });
    expect(readLogPage(file(), { level: "warn" }).entries.map((entry) => [entry.event, entry.level])).toEqual([["third", "error"], ["second", "warn"]]);
    expect(readLogPage(file(), { level: "error" }).entries[0]!.fields).toEqual({ code: "7" });
    expect(readLogPage(file(), { limit: 2 })).toMatchObject({ entries: [{ event: "fourth" }, { event: "third" }], truncated: true });
    // A window that starts mid-file drops its torn first line and is truncated.
    const windowed = readLogPage(file(), { windowBytes: 150 });
    expect(windowed.truncated).toBe(true);
    expect(windowed.entries.map((entry) => entry.event)).toEqual(["fourth"]);
    expect(readLogPage(join(dir!, "missing.log"))).toEqual({ entries: [], truncated: false });
  });
});

describe("the trim", () => {
  it("leaves a log under the cap alone and cuts one over it to its newest bytes from a line start", () => {
    const lines = Array.from({ length: 400 }, (_, index) => `timestamp=2026-01-01T00:00:00.000Z level=INFO run=r service=daemon event=e index=${index}\n`);
    writeFileSync(file(), lines.join(""));
    const size = statSync(file()).size;
    expect(trimLog(file(), size, 1000)).toBe(false);
    expect(statSync(file()).size).toBe(size);
    expect(trimLog(file(), size - 1, 1000)).toBe(true);
    const kept = readFileSync(file(), "utf8");
    expect(kept.length).toBeLessThanOrEqual(1000);
    expect(kept.startsWith("timestamp=")).toBe(true);
    expect(kept.endsWith(lines.at(-1)!)).toBe(true);
    expect(lines.join("").endsWith(kept)).toBe(true);
  });
});
