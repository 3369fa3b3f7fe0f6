import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openDatabase, readServerCursor, serverMigrations, sessions } from "../../services/storage/index.js";
import { rows, tempStateDirectory } from "./helpers.js";

const writer = fileURLToPath(new URL("./fixtures/writer.ts", import.meta.url));
const repositoryRoot = fileURLToPath(new URL("../../", import.meta.url));

interface WriterResult {
  label: string;
  applied: number;
  errors: string[];
}

function runWriter(state: string, url: string, label: string, count: number): Promise<WriterResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", writer, state, url, label, String(count)], {
      cwd: repositoryRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`writer ${label} exited ${String(code)}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split("\n").pop()!) as WriterResult);
    });
  });
}

describe("two OS processes on one file", () => {
  it("race to migrate a fresh file, then each commit 300 write transactions without an error", async () => {
    const state = await tempStateDirectory();
    const results = await Promise.all([
      runWriter(state, "shared.db", "alpha", 300),
      runWriter(state, "shared.db", "beta", 300),
    ]);
    expect(results.map((r) => r.errors)).toEqual([[], []]);
    // Exactly one of them migrated.
    expect(results.map((r) => r.applied).sort()).toEqual([0, serverMigrations.length]);

    const handle = await openDatabase({ url: "shared.db", stateDirectory: state });
    try {
      expect(await sessions.listSessions(handle, "local", "alpha")).toHaveLength(300);
      expect(await sessions.listSessions(handle, "local", "beta")).toHaveLength(300);
      // 600 inserts + 598 updates, each stamped exactly once.
      expect(await readServerCursor(handle)).toBe(600 + 598);
      expect(await rows(handle.client, "SELECT count(DISTINCT server_cursor) AS n FROM session")).toEqual([{ n: 600 }]);
      expect(await rows(handle.client, "SELECT count(*) AS n FROM harness_migration")).toEqual([{ n: serverMigrations.length }]);
    } finally {
      await handle.close();
    }
  }, 120_000);
});
