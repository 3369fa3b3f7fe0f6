#!/usr/bin/env node
// The floor under a warm-daemon command: the least a process can do that does what a local
// `ze-harness run "hello"` asks of the running daemon — node's start, the registration and token
// read from the state directory, one HTTP round trip (submit the prompt to an existing Session)
// and one SSE stream (the Turn's events, printed as they come, until `turn.finished`), over
// node:http and nothing else (no undici, no schemas, no proof of the daemon). daemon.mjs
// measures it in the same run as the CLI and prints each case's ratio to it.
//
//   node tools/bench/floor-client.mjs SESSION_ID   (HOME / XDG_DATA_HOME: the daemon's state directory)
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";

const sessionId = process.argv[2];
if (!sessionId) {
  console.error("usage: node tools/bench/floor-client.mjs SESSION_ID");
  process.exit(2);
}
const state = join(process.env.XDG_DATA_HOME || join(process.env.HOME ?? "", ".local", "share"), "ze-harness");
const { url } = JSON.parse(readFileSync(join(state, "server.json"), "utf8"));
const token = readFileSync(join(state, "daemon-token"), "utf8").trim();
const base = new URL(url);
const agent = new Agent({ keepAlive: true });

/** One request; resolves with the response (its body unread). */
function send(method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const outgoing = request({ agent, hostname: base.hostname, port: base.port, path, method, headers: { authorization: `Bearer ${token}`, ...(payload ? { "content-type": "application/json", "content-length": payload.byteLength } : {}), ...headers } });
    outgoing.once("error", reject);
    outgoing.once("response", resolve);
    outgoing.end(payload);
  });
}

const text = (response) => new Promise((resolve) => {
  let data = "";
  response.setEncoding("utf8").on("data", (chunk) => (data += chunk)).once("end", () => resolve(data));
});

const turnId = randomUUID();
const sessionPath = `/v1/servers/local/sessions/${sessionId}`;
const submitted = await send("POST", `${sessionPath}/prompts`, { delivery: "queue", turnId, prompt: [{ type: "text", text: "hello" }] }, { "x-ze-harness-client-id": `floor/${process.pid}` });
const answer = await text(submitted);
if (submitted.statusCode !== 200 && submitted.statusCode !== 202) {
  console.error(`submit: HTTP ${submitted.statusCode} ${answer}`);
  process.exit(1);
}

const events = await send("GET", `${sessionPath}/turns/${turnId}/events`, undefined, { accept: "text/event-stream" });
if (events.statusCode !== 200) {
  console.error(`events: HTTP ${events.statusCode} ${await text(events)}`);
  process.exit(1);
}
let buffered = "";
let finished = false;
events.setEncoding("utf8");
for await (const chunk of events) {
  buffered += chunk;
  let end;
  while ((end = buffered.indexOf("\n\n")) >= 0) {
    const frame = buffered.slice(0, end);
    buffered = buffered.slice(end + 2);
    const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart()).join("\n");
    if (data === "") continue;
    const event = JSON.parse(data);
    if (event.type === "turn.text.delta") process.stdout.write(event.delta);
    if (event.type === "turn.finished") finished = true;
  }
  if (finished) break;
}
process.stdout.write("\n");
events.destroy();
agent.destroy();
if (!finished) {
  console.error("events: the stream ended before turn.finished");
  process.exit(1);
}
