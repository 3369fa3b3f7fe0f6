// The Durable Object storage adapter in workerd (miniflare): the server migrations run on the
// object's first wake with the same ledger, the repositories read and write through it, a failed
// unit of work rolls back, state persists across a restart of workerd, and a database whose
// recorded schema was changed outside a migration is refused on wake.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Miniflare } from "miniflare";
import { serverMigrations } from "../../services/storage/index.js";
import { bundle, miniflare } from "./support.js";

let script: string;
let persist: string;
const open: Miniflare[] = [];

const start = (): Miniflare => {
  const mf = miniflare(script, { durableObjects: { STORAGE: { className: "StorageObject", useSQLite: true } }, durableObjectsPersist: persist });
  open.push(mf);
  return mf;
};

const json = async (mf: Miniflare, path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await mf.dispatchFetch(`http://worker${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  script = await bundle("tests/worker/fixtures/storage-object.ts");
  persist = mkdtempSync(join(tmpdir(), "zh-do-storage-"));
});

afterAll(async () => {
  for (const mf of open) await mf.dispose();
  rmSync(persist, { recursive: true, force: true });
});

describe("Durable Object storage adapter (workerd)", () => {
  it("migrates on first wake, serves the repositories, rolls back a failed unit of work, persists across a restart, and refuses a drifted schema", async () => {
    const ids = serverMigrations.map((migration) => migration.id);
    const first = start();
    expect((await json(first, "/migration")).body).toEqual({ applied: ids, ledger: ids });
    expect((await json(first, "/insert?id=s1")).body).toEqual({ id: "s1", serverCursor: 1 });
    expect((await json(first, "/rollback?id=s2")).body).toEqual({ outcome: "abandoned", exists: false });
    expect((await json(first, "/list")).body).toEqual({ ids: ["s1"] });
    // Another object has its own database.
    expect((await json(first, "/list?object=b")).body).toEqual({ ids: [] });
    // Drop a recorded index outside a migration: that object's next wake must refuse.
    expect((await json(first, "/sabotage?object=drift")).body).toEqual({ ok: true });
    await first.dispose();
    open.pop();

    const second = start();
    // Nothing pending on the second wake: the ledger is read, nothing written.
    expect((await json(second, "/migration")).body).toEqual({ applied: [], ledger: ids });
    expect((await json(second, "/list")).body).toEqual({ ids: ["s1"] });
    expect((await json(second, "/delete?id=s1")).body).toEqual({ deleted: ["s1"], retired: true });
    expect((await json(second, "/list")).body).toEqual({ ids: [] });

    const { status, body } = await json(second, "/list?object=drift");
    expect(status).toBe(503);
    expect(body["refused"]).toBe("StorageSchemaDrifted");
    expect(String(body["message"])).toContain("session_server_created_at_idx");
  });
});
