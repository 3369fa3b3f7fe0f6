import { createClient, type Client } from "@libsql/client";
import { getTableName } from "drizzle-orm";
import { generateSQLiteDrizzleJson, generateSQLiteMigration } from "drizzle-kit/api";
import { describe, expect, it } from "vitest";
import { openDatabase, schema } from "../../services/storage/index.js";

/** Columns, indexes and foreign keys of every table, in a comparable form. */
async function describeSchema(client: Client, tables: readonly string[]): Promise<unknown> {
  const normalizeDefault = (value: unknown): unknown =>
    value === "false" ? "0" : value === "true" ? "1" : value;
  const out: Record<string, unknown> = {};
  for (const table of tables) {
    const columns = (await client.execute(`PRAGMA table_xinfo(${table})`)).rows.map((c) => ({
      name: c["name"],
      type: String(c["type"]).toLowerCase(),
      notnull: c["notnull"],
      dflt: normalizeDefault(c["dflt_value"]),
      pk: c["pk"],
    }));
    const indexes = [];
    for (const index of (await client.execute(`PRAGMA index_list(${table})`)).rows) {
      const name = String(index["name"]);
      const cols = (await client.execute(`PRAGMA index_info(${name})`)).rows.map((c) => c["name"]);
      indexes.push({ name: index["origin"] === "c" ? name : `(${String(index["origin"])})`, unique: index["unique"], cols });
    }
    indexes.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const foreignKeys = (await client.execute(`PRAGMA foreign_key_list(${table})`)).rows.map((f) => ({
      table: f["table"],
      from: f["from"],
      to: f["to"],
      onDelete: String(f["on_delete"]).toUpperCase(),
      onUpdate: String(f["on_update"]).toUpperCase(),
    }));
    out[table] = { columns, indexes, foreignKeys };
  }
  return out;
}

describe("schema.ts mirrors the migrations", () => {
  it("drizzle-kit's DDL for schema.ts and the migrated database describe the same tables", async () => {
    const tables = Object.values(schema.schema).map((table) => getTableName(table));
    expect(tables.sort()).toEqual([
      "compaction",
      "conversation_entry",
      "deleted_session",
      "history_row",
      "plugin_journal",
      "saved_permission",
      "server_activity",
      "session",
      "session_context",
      "session_diagnostic",
      "session_plugin",
      "session_plugin_revision",
      "session_rewind",
      "spilled_value",
      "terminal",
      "turn",
      "turn_event",
      "turn_part",
      "turn_patch",
      "turn_steer",
      "turn_touch",
      "workspace_blob",
      "workspace_blob_ref",
      "workspace_manifest",
    ]);

    const fromSchema = createClient({ url: ":memory:" });
    const statements = await generateSQLiteMigration(
      await generateSQLiteDrizzleJson({}),
      await generateSQLiteDrizzleJson({ ...schema.schema }),
    );
    for (const statement of statements) await fromSchema.execute(statement);

    const migrated = await openDatabase({ url: ":memory:", stateDirectory: "/unused" });
    try {
      expect(await describeSchema(migrated.client, tables)).toEqual(await describeSchema(fromSchema, tables));
    } finally {
      await migrated.close();
      fromSchema.close();
    }
  });
});
