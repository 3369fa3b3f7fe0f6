// A damaged database file is named, never an untagged "database disk image is malformed": a
// real database truncated to its first pages, and a valid SQLite header followed by random
// bytes, each fail `StorageCorrupt` (not retryable, naming the file) when opened; the CLI prints
// one `error: StorageCorrupt: … <path> …` line and exits 1, and `serve` refuses to start with it.
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { openDatabase, sessions, StorageCorrupt } from "../../services/storage/index.js";
import { assertBuilt, runCli, runProcess } from "../support/cli.js";
import { binPath, tempHome } from "../support/harness.js";
import { newSession, tempStateDirectory } from "./helpers.js";

const PAGE = 4096;

/** A real Ze Harness database with enough rows to span many pages, as one self-contained file (no WAL). */
async function realDatabase(): Promise<Buffer> {
  const state = await tempStateDirectory();
  const path = join(state, "real.db");
  const storage = await openDatabase({ url: path, stateDirectory: state });
  for (let index = 0; index < 200; index++) await sessions.insertSession(storage, newSession(`session-${index}`, { workdir: `/work/${"w".repeat(200)}/${index}` }));
  const copy = join(state, "copy.db");
  await storage.client.execute(`VACUUM INTO '${copy}'`);
  await storage.close();
  const bytes = readFileSync(copy);
  expect(bytes.length).toBeGreaterThan(40 * PAGE);
  return bytes;
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

describe("a damaged database file", () => {
  beforeAll(() => {
    assertBuilt();
  });

  it("truncated to its first pages, or random bytes after a valid header: StorageCorrupt naming the file, from open, the CLI and serve", async () => {
    const real = await realDatabase();
    const damaged = {
      "truncated.db": real.subarray(0, 4 * PAGE),
      "scrambled.db": Buffer.concat([real.subarray(0, 100), randomBytes(real.length - 100)]),
    };
    const home = tempHome("ze-corrupt-");
    try {
      for (const [name, bytes] of Object.entries(damaged)) {
        const path = join(home.dir, name);
        writeFileSync(path, bytes, { mode: 0o600 });

        const error = await openDatabase({ url: path, stateDirectory: home.dir }).then(
          (handle) => handle.close().then(() => "opened"),
          (e: unknown) => e,
        );
        expect(error, name).toBeInstanceOf(StorageCorrupt);
        expect(error, name).toMatchObject({ _tag: "StorageCorrupt", retryable: false, path });
        expect((error as Error).message).toContain(path);

        const line = new RegExp(`^error: StorageCorrupt: [^\\n]*${escaped(path)}[^\\n]*\\n$`);
        const listed = await runCli(["--database", path, "session", "list"], { env: home.env, cwd: home.root });
        expect(listed, name).toMatchObject({ code: 1, stdout: "" });
        expect(listed.stderr, name).toMatch(line);

        const served = await runProcess(process.execPath, [binPath, "serve", "--port", "0", "--database", path], { env: home.env, cwd: home.root });
        expect(served, name).toMatchObject({ code: 1, stdout: "" });
        expect(served.stderr, name).toMatch(line);
        // Nothing was written into the damaged file.
        expect(statSync(path).size, name).toBe(bytes.length);
        rmSync(path);
      }
    } finally {
      home.cleanup();
    }
  });
});
