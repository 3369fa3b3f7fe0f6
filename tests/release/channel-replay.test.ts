// A replayed channel pointer after a channel switch: install.sh on stable (sequence 2 accepted),
// then on dev, then on stable again while a hostile mirror serves the older, validly signed stable
// pointer (sequence 1, release 0.1.0). The installation must remember stable's sequence across the
// switch (and across `update`'s own rewrites of install.json) and refuse the replay, changing nothing.
import { copyFileSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { setAuto } from "../../services/release/update.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { install, publish, releaseKey, releaseServer, standInArchive } from "./support.js";

vi.setConfig({ testTimeout: 60_000 });

let work: TempHome;
let server: { readonly origin: string; close(): Promise<void> };

beforeAll(async () => {
  work = tempHome("ze-replay-");
  server = await releaseServer(join(work.dir, "site"));
});
afterAll(async () => {
  await server?.close();
  work?.cleanup();
});

describe("a replayed pointer after a channel switch", () => {
  it("is refused by install.sh; the installation stays as it was", async () => {
    const key = releaseKey(join(work.dir, "keys"));
    const site = join(work.dir, "site");
    const v010 = standInArchive(join(work.dir, "a"), "0.1.0");
    const v011 = standInArchive(join(work.dir, "a"), "0.1.1");
    publish(site, key, "stable", [v010]);
    const replayed = join(work.dir, "stable-sequence-1.json");
    copyFileSync(join(site, "channels", "stable.json"), replayed);
    publish(site, key, "stable", [v011]);
    publish(site, key, "dev", [v011]);

    const env = { ...work.env, ZE_HARNESS_RELEASE_ORIGIN: server.origin, PATH: process.env["PATH"] ?? "" };
    const flags = ["--no-modify-path", "--no-restart-daemon"];
    expect((await install(site, ["--channel", "stable", ...flags], env, work.root)).code).toBe(0);
    expect((await install(site, ["--channel", "dev", ...flags], env, work.root)).code).toBe(0);
    // update rewrites install.json (here through --auto off): the stable sequence must survive it.
    setAuto(env, false);
    const record = join(work.env["XDG_DATA_HOME"] ?? "", "ze-harness", "install.json");
    const before = readFileSync(record, "utf8");
    const launcher = join(work.env["HOME"] ?? "", ".ze-harness", "bin", "ze-harness");
    const target = readlinkSync(launcher);

    copyFileSync(replayed, join(site, "channels", "stable.json"));
    const result = await install(site, ["--channel", "stable", ...flags], env, work.root);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/stable pointer \(sequence 1\) is older than the one this installation accepted \(sequence 2\): a replayed pointer/);
    expect(readFileSync(record, "utf8")).toBe(before);
    expect(JSON.parse(before)).toMatchObject({ channel: "dev", version: "0.1.1", stableSequence: 2, devSequence: 1 });
    expect(readlinkSync(launcher)).toBe(target);
  });
});
