// npm run build (after tools/bundle.mjs has written local.cjs and embedded.cjs and
// tools/build-assets.mjs what they load): the V8 code cache of each of the fast path's files,
// dist/bundle/<file>.cjs → <file>.cjs.cache (bin/local-cache.js reads it; its header names this
// Node release, so another Node ignores it and compiles from source). It runs again as its own
// process without NODE_OPTIONS when that is set: V8 accepts cached data only in a process whose V8
// flags match the ones it was made with, a plain `node`'s.
//
// local.cjs is compiled with every function compiled eagerly (V8's --no-lazy, switched on for that
// compile alone, so the flags the data is stamped with are the defaults a command runs with): a
// command then finds the bytecode of whatever it calls in the cache, not only of the top level
// (measured on a warm-daemon `run "hello"`: ≈ 8 ms less client CPU; a top-level-only cache saved ≈ 2 ms).
//
// embedded.cjs (3.4 MiB, the whole embedded host) holds the bytecode of what one embedded one-shot
// runs: a child (`--embedded-run`) runs `run --embedded "hello"` in process, through local.cjs,
// against a local answer in a temp home, and takes the data once it has run. Against an eager cache
// of the file (5.5 MiB of data to read and deserialize) that is ≈ 35 ms less wall time and ≈ 50 ms
// less CPU per one-shot, measured interleaved on this 2-core VM; a function it did not run is
// compiled when first called, as without a cache. Should that run fail, the eager cache is written
// instead and the build says so.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bundle = join(root, "dist", "bundle");
const { CACHE_SUFFIX, compile, encodeCache, loadLocal, sourceText } = createRequire(import.meta.url)(join(root, "bin", "local-cache.js"));

/** Writes `file`'s cache whole, then renames it: a command never reads half a cache (and would ignore one: its header). */
function writeCache(file, bytes, data, how) {
  const cacheFile = `${file}${CACHE_SUFFIX}`;
  writeFileSync(`${cacheFile}.tmp`, encodeCache(bytes, data));
  renameSync(`${cacheFile}.tmp`, cacheFile);
  console.log(`bundle: dist/bundle/${file.slice(bundle.length + 1)}${CACHE_SUFFIX} (${(data.length / 1024).toFixed(0)} KiB of V8 code cache for Node ${process.version}, ${how})`);
}

function eagerCache(file) {
  const bytes = readFileSync(file);
  setFlagsFromString("--no-lazy");
  const script = compile(file, sourceText(bytes), undefined);
  setFlagsFromString("--lazy");
  writeCache(file, bytes, script.createCachedData(), "every function");
}

/** The OpenAI Chat Completions stream of one short answer, for any request. */
function answerServer() {
  const chunk = (delta, finish) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "cache", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  return createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(`${chunk({ role: "assistant", content: "Hello." }, null)}${chunk({}, "stop")}data: [DONE]\n\n`);
    });
  });
}

/** The child: one embedded one-shot in process; the cache of what it ran is written as the process exits. */
async function embeddedRun() {
  const home = mkdtempSync(join(tmpdir(), "ze-code-cache-"));
  const server = answerServer();
  await new Promise((resolvePromise) => server.listen(0, "127.0.0.1", resolvePromise));
  const configDir = join(home, "config", "ze-harness");
  mkdirSync(configDir, { recursive: true });
  mkdirSync(join(home, "root"));
  const definition = { displayName: "Code cache", baseURL: `http://127.0.0.1:${server.address().port}/v1`, protocol: "chat", authentication: { kind: "none" }, models: { answer: { displayName: "Answer", limits: { contextUnits: 8192, outputUnits: 1024 } } } };
  // The temp home's global config, passed as --config too, which takes the project layer's place: no
  // ze-harness.config.json above the temp directory (in /tmp any local user can put one) configures
  // the build's run or has its plugins run inside npm run build.
  const configFile = join(configDir, "config.json");
  writeFileSync(configFile, JSON.stringify({ model: "cache/answer", providers: { cache: { definition } } }));
  for (const name of Object.keys(process.env)) if (name.startsWith("ZE_HARNESS") || name.startsWith("XDG_")) delete process.env[name];
  Object.assign(process.env, { HOME: join(home, "home"), XDG_CONFIG_HOME: join(home, "config"), XDG_DATA_HOME: join(home, "data"), XDG_STATE_HOME: join(home, "state"), XDG_CACHE_HOME: join(home, "cache") });
  process.chdir(join(home, "root"));
  const scripts = new Map();
  process.on("exit", (code) => {
    const embedded = scripts.get(join(bundle, "embedded.cjs"));
    if (code === 0 && embedded !== undefined) writeCache(embedded.file, embedded.bytes, embedded.script.createCachedData(), "what an embedded one-shot runs");
    rmSync(home, { recursive: true, force: true });
  });
  const cli = loadLocal(join(bundle, "local.cjs"), (file, script, bytes) => scripts.set(file, { file, script, bytes }));
  await cli.main(["run", "--embedded", "--config", configFile, "hello"], root);
  server.close();
}

if (process.env.NODE_OPTIONS !== undefined && process.env.NODE_OPTIONS !== "") {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const again = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { env, stdio: "inherit" });
  process.exitCode = again.status ?? 1;
} else if (process.argv[2] === "--embedded-run") await embeddedRun();
else {
  eagerCache(join(bundle, "local.cjs"));
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), "--embedded-run"], { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", timeout: 120_000 });
  const made = child.status === 0 && /embedded\.cjs\.cache/.test(child.stdout);
  if (made) process.stdout.write(child.stdout.split("\n").filter((line) => line.startsWith("bundle: ")).join("\n") + "\n");
  else {
    console.warn(`bundle: the embedded one-shot for embedded.cjs's code cache failed (${child.status ?? child.signal ?? child.error}); caching every function instead\n${child.stderr}`);
    eagerCache(join(bundle, "embedded.cjs"));
  }
}
