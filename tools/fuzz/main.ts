// `npm run fuzz -- [--requests N] [--seed S] [--only I,J] [--timeout-ms MS]`: the contract fuzzer
// against a real `ze-harness serve` over TCP. The server is started through its public entry
// (bin/ze-harness.js — run `npm run build` first) in a temp home of its own: a libSQL file
// database, the scripted test model as its only provider, the real `everything` MCP server, and
// `cat` as its shell, so nothing fuzzed reaches the internet or the user's state. tools/ imports
// no service code: the server is a process, the contract is generated/openapi.json.
//
// Each failure prints its seed, request index and the request as sent; `--only I` replays
// request I (after the same seeding). Any ERROR line the server writes during a request is a
// failure of that request too. The exit status is 1 when anything failed.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { startTestModel } from "../test-model/index.js";
import { answerEverything, FUZZ_ENV, fuzzConfig } from "./target.js";
import { formatFailure, runFuzz, UnsendableRequest, type FuzzFailure, type FuzzRequest, type FuzzResponse, type Send } from "./run.js";

const repoRoot = join(import.meta.dirname, "..", "..");
const binPath = join(repoRoot, "bin", "ze-harness.js");

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    seed: { type: "string" },
    only: { type: "string" },
    "timeout-ms": { type: "string", default: "30000" },
  },
});
const requests = Number(values.requests);
const seed = values.seed ?? `s${Date.now().toString(36)}`;
const only = values.only?.split(",").map(Number);
if (!Number.isInteger(requests) || requests < 0 || (only && only.some((index) => !Number.isInteger(index) || index < 0))) {
  console.error("usage: npm run fuzz -- [--requests N] [--seed S] [--only I,J] [--timeout-ms MS]");
  process.exit(2);
}
if (!existsSync(join(repoRoot, "dist", "bundle", "main.js"))) {
  console.error("fuzz: dist/ is missing; run `npm run build` first (the fuzzer starts the built server)");
  process.exit(2);
}

/** An HTTP/1.1 transport that sends the fuzz request's bytes as they are (headers repeated, any method). */
function httpTransport(baseUrl: string): { send: Send; close(): void } {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send: Send = (fuzz: FuzzRequest) =>
    new Promise<FuzzResponse>((resolvePromise, reject) => {
      let outgoing: ReturnType<typeof httpRequest>;
      try {
        outgoing = httpRequest({ host: url.hostname, port: url.port, method: fuzz.method, path: fuzz.target, agent });
      } catch (error) {
        reject(new UnsendableRequest(error instanceof Error ? error.message : String(error)));
        return;
      }
      outgoing.on("error", reject);
      try {
        const grouped = new Map<string, string[]>();
        for (const [name, value] of fuzz.headers) grouped.set(name, [...(grouped.get(name) ?? []), value]);
        for (const [name, group] of grouped) outgoing.setHeader(name, group.length === 1 ? group[0]! : group);
      } catch (error) {
        // A header node:http will not write: the request never leaves.
        outgoing.off("error", reject);
        outgoing.on("error", () => undefined);
        outgoing.destroy();
        reject(new UnsendableRequest(error instanceof Error ? error.message : String(error)));
        return;
      }
      outgoing.on("response", (incoming) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(incoming.headers)) headers[name] = Array.isArray(value) ? value.join(", ") : (value ?? "");
        const status = incoming.statusCode ?? 0;
        if ((headers["content-type"] ?? "").startsWith("text/event-stream")) {
          // A stream is checked by its status and headers; closing the socket ends it.
          incoming.destroy();
          outgoing.destroy();
          resolvePromise({ status, headers });
          return;
        }
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("error", reject);
        incoming.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolvePromise({ status, headers, ...(fuzz.method === "HEAD" && text === "" ? {} : { text }) });
        });
      });
      outgoing.end(fuzz.body === undefined ? undefined : Buffer.from(fuzz.body));
    });
  return { send, close: () => agent.destroy() };
}

const token = `fuzz-${Date.now().toString(36)}`;
const model = await startTestModel();
answerEverything(model);
const home = realpathSync(mkdtempSync(join(tmpdir(), "ze-fuzz-")));
const root = join(home, "root");
mkdirSync(join(home, "config", "ze-harness"), { recursive: true });
mkdirSync(root);
writeFileSync(join(home, "config", "ze-harness", "config.json"), JSON.stringify(fuzzConfig(model)));
const env: Record<string, string> = {
  HOME: join(home, "home"),
  XDG_CONFIG_HOME: join(home, "config"),
  XDG_DATA_HOME: join(home, "data"),
  XDG_CACHE_HOME: join(home, "cache"),
  PATH: process.env["PATH"] ?? "",
  ...FUZZ_ENV,
  // The server demands a bearer token (the `auth` mutation reaches every 401); from the
  // environment, not argv, where every local user could read it.
  ZE_HARNESS_TOKEN: token,
};
const child = spawn(process.execPath, [binPath, "serve", "--port", "0", "--database", join(home, "fuzz.db")], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
// However this process ends (a crash included), the server and the temp home go with it.
process.once("exit", () => {
  if (child.exitCode === null) child.kill("SIGKILL");
  rmSync(home, { recursive: true, force: true });
});
const errorLines: string[] = [];
createInterface({ input: child.stderr! }).on("line", (line) => {
  if (/\blevel=ERROR\b/.test(line)) errorLines.push(line);
});
const baseUrl = await new Promise<string>((resolvePromise, reject) => {
  createInterface({ input: child.stdout! }).once("line", resolvePromise);
  child.once("exit", (code) => reject(new Error(`serve exited with ${code} before printing its URL`)));
});

const transport = httpTransport(baseUrl);
// A server ERROR line written while request N was in flight belongs to request N.
const logged: FuzzFailure[] = [];
const send: Send = async (fuzz) => {
  const before = errorLines.length;
  const response = await transport.send(fuzz);
  for (const line of errorLines.slice(before)) logged.push({ seed, request: fuzz, problem: `the server logged: ${line}`, response });
  return response;
};

console.log(`fuzz: seed ${seed}, ${only ? `requests ${only.join(",")}` : `${requests} requests`} against ${baseUrl} (temp home ${home})`);
let exitCode = 1;
try {
  const report = await runFuzz({
    send,
    seed,
    requests,
    token,
    ...(only ? { only } : {}),
    timeoutMs: Number(values["timeout-ms"]),
    onProgress: (done, failed) => {
      if (done % 500 === 0) console.log(`  ${done} requests, ${failed} failures`);
    },
  });
  const failures = [...report.failures, ...logged];
  const seconds = report.elapsedMs / 1000;
  for (const failure of failures) console.log(`\n${formatFailure(failure)}`);
  console.log(
    `\nfuzz: ${report.requests} requests in ${seconds.toFixed(1)} s (${(report.requests / seconds).toFixed(0)}/s), ${report.unsendable} unsendable, statuses ${JSON.stringify(report.statuses)}, ${report.succeeded.size} operations answered 2xx; ${failures.length} failures`,
  );
  exitCode = failures.length === 0 && child.exitCode === null ? 0 : 1;
  if (child.exitCode !== null) console.log(`fuzz: the server exited (${child.exitCode}) during the run`);
} finally {
  transport.close();
  child.kill("SIGTERM");
  await new Promise((resolvePromise) => (child.exitCode === null ? child.once("exit", resolvePromise) : resolvePromise(undefined)));
  await model.close();
  rmSync(home, { recursive: true, force: true });
}
process.exit(exitCode);
