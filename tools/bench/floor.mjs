#!/usr/bin/env node
// The floor under a one-shot `ze-harness run`: the least a process can do that does the same
// work — open libSQL (the native `libsql` driver) on a new file, commit two transactions (as a
// run admits its Turn and settles it), and stream one answer from the model through the
// `openai` SDK, printing it. oneshot.mjs measures it in the same run as the CLI.
//
//   node tools/bench/floor.mjs BASE_URL DIR   (BASE_URL: the test model's OpenAI-compatible /v1 root)
import Database from "libsql";
import OpenAI from "openai";
import { join } from "node:path";

const [baseURL, dir] = process.argv.slice(2);
if (!baseURL || !dir) {
  console.error("usage: node tools/bench/floor.mjs BASE_URL DIR");
  process.exit(2);
}

const db = new Database(join(dir, "floor.db"), { timeout: 5000 });
db.exec("PRAGMA journal_mode = WAL");
db.exec("CREATE TABLE IF NOT EXISTS turns (id INTEGER PRIMARY KEY, prompt TEXT NOT NULL, answer TEXT)");
const commit = (statement, ...values) => {
  db.exec("BEGIN IMMEDIATE");
  const result = db.prepare(statement).run(...values);
  db.exec("COMMIT");
  return result;
};
const admitted = commit("INSERT INTO turns (prompt) VALUES (?)", "hello");

const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });
const stream = await client.chat.completions.create({ model: "scripted", stream: true, messages: [{ role: "user", content: "hello" }] });
let answer = "";
for await (const chunk of stream) {
  const text = chunk.choices[0]?.delta?.content ?? "";
  answer += text;
  process.stdout.write(text);
}
process.stdout.write("\n");
commit("UPDATE turns SET answer = ? WHERE id = ?", answer, admitted.lastInsertRowid);
db.close();
