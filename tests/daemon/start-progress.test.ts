// The daemon start shows its progress (reference, "Upgrading the local daemon"): "a bar on a
// terminal, or one line per backup or migration step otherwise. Before migrating a database that
// already holds data, the daemon copies it to `ze-harness.db.pre-<migration>.bak`; the bar follows
// that copy byte by byte, then each migration … A failed migration rolls back completely, and the
// CLI shows the daemon's own error." Through the built binary, on a database an older build wrote
// (every migration but the newest) holding ~40 MiB of data.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase, serverMigrations } from "../../services/storage/index.js";
import { assertBuilt } from "../support/cli.js";
import { startPty } from "../support/pty.js";
import { cleanupDaemonHome, daemonHome, type DaemonHome } from "./support.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const newest = serverMigrations[serverMigrations.length - 1]!;
const BLOBS = 640; // × 64 KiB ≈ 40 MiB

let home: DaemonHome | undefined;

beforeAll(() => assertBuilt());
afterEach(async () => {
  await cleanupDaemonHome(home);
  home = undefined;
});

/** The default database of `home`, as the build before the newest migration left it, with data. */
async function olderDatabase(target: DaemonHome, options: { readonly orphan?: boolean } = {}): Promise<string> {
  const path = join(target.stateDir, "ze-harness.db");
  const old = await openDatabase({ url: path, stateDirectory: target.stateDir, migrations: serverMigrations.slice(0, -1) });
  try {
    await old.client.execute(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${BLOBS})
       INSERT INTO workspace_blob (sha256, size, bytes) SELECT printf('%064d', i), 65536, randomblob(65536) FROM n`,
    );
    if (options.orphan) {
      // A row whose Session does not exist: the migration batch's foreign key check fails it.
      const columns = (await old.client.execute("PRAGMA table_info(session_context)")).rows;
      const values = columns.map((column) => (column["name"] === "session_id" ? "'no-such-session'" : column["pk"] ? "NULL" : String(column["type"]).toLowerCase().includes("int") ? "0" : "'{}'"));
      await old.client.execute("PRAGMA foreign_keys = OFF");
      await old.client.execute(`INSERT INTO session_context (${columns.map((column) => String(column["name"])).join(", ")}) VALUES (${values.join(", ")})`);
    }
  } finally {
    await old.close();
  }
  return path;
}

describe("starting the daemon on a database that needs migrating", () => {
  it("without a terminal: one stderr line per backup or migration step, the backup written, the command's output on stdout", async () => {
    home = daemonHome();
    const path = await olderDatabase(home);
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(30 * 1024 * 1024);

    const result = await home.cli(["session", "list"]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
    const backup = `${path}.pre-${newest.id}.bak`;
    expect(result.stderr.split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(new RegExp(`^Backing up the database to ${backup.replaceAll(".", "\\.")} \\(\\d+\\.\\d MiB\\)…$`)),
      expect.stringMatching(new RegExp(`^Backed up the database to ${backup.replaceAll(".", "\\.")} \\(\\d+\\.\\d MiB\\)\\.$`)),
      `Applying migration 1/1: ${newest.id}…`,
      "Migrated the database (1 migration).",
    ]);
    expect(existsSync(backup)).toBe(true);
    expect(statSync(backup).size).toBeGreaterThan(30 * 1024 * 1024);
    // The daemon logged the steps it reported.
    expect(home.log()).toMatch(/event=storage\.backup\.started .*bytes=\d+/);
    expect(home.log()).toMatch(new RegExp(`event=storage\\.migration\\.started id=${newest.id} index=0 total=1 upgrade=true`));

    // Started again on the migrated database: nothing to report.
    await home.cli(["service", "stop"]);
    const again = await home.cli(["session", "list"]);
    expect(again).toMatchObject({ code: 0, stderr: "" });
  });

  it("on a terminal: a bar follows the copy byte by byte, then the migration, and is cleared", async () => {
    home = daemonHome();
    await olderDatabase(home);
    const cli = startPty(["session", "list"], { env: home.env, cwd: home.root, cols: 160 });
    const exit = await cli.exited;
    expect(exit.exitCode, cli.screen()).toBe(0);
    const frames = cli.raw().split("\r\u001b[2K").map((frame) => frame.trim());
    expect(frames).toContain("Starting the local Ze Harness daemon…");
    const copies = frames.filter((frame) => frame.startsWith(`Backing up ze-harness.db.pre-${newest.id}.bak `));
    expect(copies.length, JSON.stringify(frames)).toBeGreaterThan(2);
    // The first frame at 0 %, at least one in between (the copy seen while it grew), and the end at 100 %.
    expect(copies[0]).toMatch(/\[-{24}\]\s+0% 0\.0 MiB\/\d+\.\d MiB$/);
    expect(copies.some((frame) => /\[#*-+\]\s+\d+% [1-9]\d*\.\d MiB\//.test(frame))).toBe(true);
    expect(copies[copies.length - 1]).toMatch(/\[#{24}\] 100% \d+\.\d MiB$/);
    // The total is what the copy writes: the last frame before 100 % is close to it.
    const [copied, total] = /(\d+\.\d) MiB\/(\d+\.\d) MiB$/.exec(copies[copies.length - 2]!)!.slice(1).map(Number);
    expect(total).toBeGreaterThan(35);
    expect(total).toBeLessThan(50);
    expect(copied).toBeLessThanOrEqual(total!);
    expect(frames).toContain(`Migrating the database [------------------------]   0% 1/1 ${newest.id}`);
    expect(frames).toContain("Migrating the database [########################] 100% 1/1");
    // Cleared: the screen shows the command's output, not the bar.
    expect(cli.screen()).not.toContain("Migrating the database");
    expect(cli.screen()).toContain("[]");
  });

  it("a failed migration rolls back: the CLI shows the daemon's own error, exit 1, the database as it was", async () => {
    home = daemonHome();
    const path = await olderDatabase(home, { orphan: true });
    const result = await home.cli(["session", "list"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr.split("\n").filter(Boolean);
    expect(lines.slice(0, 2)).toEqual([expect.stringMatching(/^Backing up the database to /), expect.stringMatching(/^Backed up the database to /)]);
    expect(lines[lines.length - 1]).toBe("error: StorageMigrationFailed: Migrations left foreign key violations in session_context; nothing was migrated.");
    expect(home.registration()).toBeUndefined();
    // Rolled back: the ledger still ends before the newest migration.
    const old = await openDatabase({ url: path, stateDirectory: home.stateDir, migrations: serverMigrations.slice(0, -1) });
    try {
      const ledger = await old.client.execute("SELECT id FROM harness_migration ORDER BY ordinal DESC LIMIT 1");
      expect(ledger.rows[0]?.["id"]).toBe(serverMigrations[serverMigrations.length - 2]!.id);
    } finally {
      await old.close();
    }
  });
});
