// Measures Turn recording (issue 18 §1) against the built harness in process, with the scripted
// test model in process (tsx, for tools/test-model only). Prints one JSON line.
//
// - scan: the warm stat-only scan of a 10,000-file git repository (what every Turn runs twice),
//   medians and p99 over repeated runs, against the floor of the same walk done by hand in this
//   process (readdirSync + lstatSync of every file, nothing else), and `git status` when git is
//   installed;
// - turns: 1,000 one-step Turns in that repository (each a text answer; every tenth Turn a
//   `write` of one file, so changes are recorded too): database growth;
// - ignored: one Turn whose shell command rewrites a file in 100 MB of ignored build output:
//   bytes added to the content store (target 0);
// - delete: every Session deleted, then VACUUM: the database size against its size before any
//   Turn (target within 10 %).
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempHome } from "./lib.mjs";

const options = { files: 10_000, turns: 1000, scans: 60, ignoredMiB: 100, ...JSON.parse(process.argv[2] ?? "{}") };
const log = (line) => process.stderr.write(`recording-worker: ${line}\n`);
const SERVER = "local";

const { startTestModel } = await import("../test-model/index.ts");
const { createHarness } = await import("../../dist/services/host/harness.js");
const { createZeClient, sdk, unwrap } = await import("../../dist/clients/index.js");
const { workspace } = await import("../../dist/services/storage/index.js");
const { recordingRules } = await import("../../dist/services/workspace/files/ignore-rules.js");
const { statScan, ListingCache } = await import("../../dist/services/workspace/files/stat-scan.js");

const quantile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
};
const stats = (values) => ({ median: quantile(values, 0.5), p99: quantile(values, 0.99) });
const hasGit = (() => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const git = (cwd, ...args) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], { cwd, stdio: "ignore" });

function makeRepository(dir, files) {
  mkdirSync(join(dir, ".git"), { recursive: true });
  const perDirectory = 50;
  for (let index = 0; index < files; index++) {
    const sub = join(dir, "src", `d${Math.floor(index / perDirectory)}`);
    if (index % perDirectory === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${index}.ts`), `export const value${index} = ${index};\n`);
  }
  writeFileSync(join(dir, ".gitignore"), "build/\n");
  if (hasGit) {
    git(dir, "init", "-q");
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "bench");
  }
}

function floorWalk(dir) {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === ".git") continue;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) count += floorWalk(path);
    else {
      lstatSync(path);
      count++;
    }
  }
  return count;
}

const timed = async (fn) => {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e6;
};

const model = await startTestModel({ directives: true });
const home = tempHome("ze-bench-recording-");
const result = { files: options.files, turns: options.turns, git: hasGit };
try {
  const repo = join(home.root, "repo");
  makeRepository(repo, options.files);

  // The warm scan, as the recorder runs it (rules and listing cache kept across Turns).
  const rules = recordingRules(repo, home.env);
  const cache = new ListingCache();
  let previous = new Map((await statScan(repo, { rules, cache })).map((entry) => [entry[0], entry]));
  const scan = [];
  const floor = [];
  const gitStatus = [];
  for (let round = 0; round < options.scans; round++) {
    scan.push(await timed(async () => (previous = new Map((await statScan(repo, { rules, previous, cache })).map((entry) => [entry[0], entry])))));
    floor.push(await timed(() => floorWalk(repo)));
    if (hasGit && round % 4 === 0) gitStatus.push(await timed(() => git(repo, "status", "--porcelain")));
  }
  result.scan = { ...stats(scan), floor: stats(floor), gitStatus: hasGit ? stats(gitStatus) : undefined, entries: previous.size };
  log(`scan median ${result.scan.median.toFixed(1)} ms over ${previous.size} files`);

  // The same Turns with recording off, in the same process first: what the Turns cost without it.
  result.baseline = await runTurns("off");
  Object.assign(result, await runTurns("repository"));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) })}\n`);
} finally {
  await model.close();
  if (process.env.BENCH_KEEP) log(`kept ${home.dir}`);
  else home.cleanup();
}

async function runTurns(recording) {
  const repo = join(home.root, "repo");
  const result = {};
  const configDir = join(home.env.XDG_CONFIG_HOME, "ze-harness");
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, "config.json"),
    JSON.stringify({
      model: "test/scripted",
      providers: { test: { definition: { displayName: "Scripted", baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "none" }, models: { scripted: { limits: { contextUnits: 200000, outputUnits: 8192 } } } } } },
      permissions: [{ action: "*", resource: "*", effect: "allow" }],
      workspace: { recording },
    }),
  );
  const database = join(home.dir, `recording-${recording}.db`);
  const harness = await createHarness({ database, serverRoot: repo, env: home.env });
  const size = () => statSync(database).size + (existsSync(`${database}-wal`) ? statSync(`${database}-wal`).size : 0);
  // Outside any transaction, on the read connection: the WAL folded into the file and truncated.
  const checkpoint = () => harness.storage.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  try {
    const client = createZeClient({ baseUrl: "http://localhost", fetch: harness.fetch, clientId: "bench" });
    const createSession = async (workdir) => {
      const sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: client.client, path: { server: SERVER, sessionId }, body: workdir ? { workdir } : {} }));
      return sessionId;
    };
    const turn = async (sessionId, text) => {
      const turnId = randomUUID();
      await unwrap(sdk.submitPrompt({ client: client.client, path: { server: SERVER, sessionId }, headers: { "x-ze-harness-client-id": "bench" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } }));
      await harness.runner.settled(turnId);
      return turnId;
    };
    await checkpoint();
    const start = size();
    const sessionId = await createSession();
    const turnTimes = [];
    for (let index = 0; index < options.turns; index++) {
      const text = index % 10 === 9 ? `@call write {"filePath":"notes/n${index % 50}.md","content":"note ${index}\\n"}\n@then noted` : `@say answer ${index}`;
      turnTimes.push(await timed(() => turn(sessionId, text)));
      if (index % 200 === 199) log(`${index + 1} Turns`);
    }
    await checkpoint();
    const afterTurns = size();
    const blobsAfterTurns = await workspace.blobBytes(harness.storage);
    result.turnsResult = { growthBytes: afterTurns - start, turn: stats(turnTimes), blobs: blobsAfterTurns };

    // 100 MB of ignored build output, one Turn that rewrites a file there.
    mkdirSync(join(repo, "build"), { recursive: true });
    const chunk = Buffer.alloc(1024 * 1024, 7);
    for (let index = 0; index < options.ignoredMiB; index++) writeFileSync(join(repo, "build", `out${index}.bin`), chunk);
    const ignoredSession = await createSession();
    await turn(ignoredSession, "@say warm");
    const blobsBefore = await workspace.blobBytes(harness.storage);
    await turn(ignoredSession, '@call shell {"command":"echo rebuilt >> build/out0.bin"}\n@then built');
    const blobsAfter = await workspace.blobBytes(harness.storage);
    result.ignored = { mib: options.ignoredMiB, addedBytes: blobsAfter.bytes - blobsBefore.bytes };

    for (const id of [sessionId, ignoredSession]) await unwrap(sdk.deleteSession({ client: client.client, path: { server: SERVER, sessionId: id } }));
    await checkpoint();
    await harness.storage.client.execute("VACUUM");
    await checkpoint();
    const end = size();
    result.delete = { startBytes: start, afterTurnsBytes: afterTurns, afterDeleteVacuumBytes: end, blobsLeft: await workspace.blobBytes(harness.storage) };
  } finally {
    await harness.close();
  }
  // The ignored output goes, so the next run starts from the same repository.
  rmSync(join(repo, "build"), { recursive: true, force: true });
  return result;
}
