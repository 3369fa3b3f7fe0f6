// npm run worker:dev -- [--port N] [--host H] [--persist DIR]: bundles the Worker host
// (worker/index.ts) and serves it in workerd through miniflare. Like `serve`, the first stdout
// line is the base URL; Ctrl-C (or SIGTERM) stops it. Durable Objects persist under DIR
// (default: <state directory>/worker/durable-objects, the state directory being the CLI's:
// $XDG_DATA_HOME/ze-harness, else ~/.local/share/ze-harness); Worker variables come from the
// environment (worker/miniflare.config.mjs lists them).
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Miniflare } from "miniflare";
import { bundleWorker, root } from "./bundle.mjs";
import { workerOptions } from "../../worker/miniflare.config.mjs";

const { values } = parseArgs({
  options: { port: { type: "string", default: "8787" }, host: { type: "string", default: "127.0.0.1" }, persist: { type: "string" } },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`error: --port must be 0-65535, not ${JSON.stringify(values.port)}`);
  process.exit(2);
}
const dataHome = process.env.XDG_DATA_HOME?.startsWith("/") ? process.env.XDG_DATA_HOME : join(homedir(), ".local", "share");
const stateDirectory = join(dataHome, "ze-harness");
const persist = resolve(values.persist ?? join(stateDirectory, "worker", "durable-objects"));
mkdirSync(persist, { recursive: true, mode: 0o700 });

const scriptPath = join(root, "dist", "worker", "index.mjs");
const { natives } = await bundleWorker({ entry: "worker/index.ts", outfile: scriptPath });
for (const [name, importers] of natives) console.error(`warning: the Worker bundle imports the native ${name} (${importers.join(", ")})`);

const mf = new Miniflare(workerOptions({ scriptPath, persist, host: values.host, port }));
const url = await mf.ready;
process.stdout.write(`${url.origin}\n`);
console.error(`Durable Objects persist under ${persist}`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await mf.dispose();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
