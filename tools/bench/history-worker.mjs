// Measures history and search page costs at two history sizes against the built harness in
// process (its Fetch handler, through the generated client): a Session with N Turns' rows (3 rows
// a Turn: prompt, answer text, tool call), published through storage's own `publishRows` (the
// code path a Turn settlement takes), in batches. Prints one JSON line of medians and p99s.
import { randomUUID } from "node:crypto";
import { tempHome } from "./lib.mjs";

const { createHarness } = await import("../../dist/services/host/harness.js");
const { historyRows } = await import("../../dist/services/storage/index.js");
const { createZeClient, sdk, unwrap } = await import("../../dist/clients/index.js");

const sizes = [100, 10_000];
const repeats = Number(process.env.BENCH_HISTORY_REPEATS ?? 40);
const server = "local";

const quantile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};

async function fill(storage, sessionId, turns) {
  const base = { entryId: null, partId: null, hidden: false, thinking: null, createdAt: 1 };
  for (let start = 0; start < turns; start += 500) {
    await storage.transaction(async (tx) => {
      for (let i = start; i < Math.min(turns, start + 500); i += 1) {
        const turnId = randomUUID();
        const rare = i === 0 ? " zanzibar" : "";
        await historyRows.publishRows(tx, sessionId, [
          { ...base, turnId, role: "user", kind: "prompt", body: `Question ${i}: where is the needle in the haystacks of stack ${i}?${rare}`, toolInput: null, tool: null },
          { ...base, turnId, role: "assistant", kind: "text", body: `Answer ${i}: the needle is in the haystacks, next to the needles of turn ${i}. `.repeat(4), toolInput: null, tool: null },
          { ...base, turnId, role: "tool", kind: "tool", body: `file ${i} contents with needlework and haystacks`, toolInput: JSON.stringify({ filePath: `src/file-${i}.ts` }), tool: { toolId: "read", toolCallId: `call_${i}`, state: "completed", internal: false } },
        ]);
      }
    });
  }
}

async function measure(fn) {
  for (let i = 0; i < 5; i += 1) await fn();
  const times = [];
  for (let i = 0; i < repeats; i += 1) {
    const started = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { median: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

const home = tempHome("ze-bench-history-");
const results = {};
try {
  for (const size of sizes) {
    const harness = await createHarness({ database: `${home.dir}/history-${size}.db`, serverRoot: home.root, env: home.env, runTurns: false });
    try {
      const client = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch });
      const sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: client.client, path: { server, sessionId }, body: {} }));
      await fill(harness.storage, sessionId, size);
      if (process.env.BENCH_HISTORY_OPTIMIZE) await harness.storage.transaction((tx) => tx.sql.run("INSERT INTO history_fts(history_fts) VALUES ('optimize')"));
      const path = { server, sessionId };
      const middle = String(Math.ceil(size / 2));
      const search = (query, extra = {}) => () => unwrap(sdk.search({ client: client.client, path, query: { query, caseSensitive: "false", wholeWord: "true", ...extra } }));
      const ops = {
        "history first page": () => unwrap(sdk.history_({ client: client.client, path, query: { limit: "50" } })),
        "history page mid-history": () => unwrap(sdk.history_({ client: client.client, path, query: { limit: "50", afterSourceSequence: middle, afterItemIndex: "2" } })),
        "history last page": () => unwrap(sdk.history_({ client: client.client, path, query: { limit: "50", eventSequence: String(size) } })),
        "search page, word in every Turn": search("needle", { limit: "50" }),
        "search page mid-history": search("needle", { limit: "50", afterSourceSequence: middle, afterItemIndex: "0", afterField: "body", afterByte: "0" }),
        "search page, rare word (one hit)": search("zanzibar"),
        "search page, candidates only (no hits)": search("haystack"),
        "server search page, newest first": () => unwrap(sdk.searchServer({ client: client.client, path: { server }, query: { query: "needle", caseSensitive: "false", wholeWord: "true", limit: "50" } })),
      };
      results[size] = {};
      for (const [name, fn] of Object.entries(ops)) results[size][name] = await measure(fn);
    } finally {
      await harness.close();
    }
  }
  console.log(JSON.stringify({ sizes, repeats, results }));
} finally {
  home.cleanup();
}
