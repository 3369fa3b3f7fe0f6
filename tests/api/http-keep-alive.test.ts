// A request refused before its body is read (here: a submission without its client-id header)
// must leave the connection usable for the client's next request. workerd closes a connection
// whose request body was left unread once it has answered; a client that reused the kept-alive
// connection meanwhile (undici does) then saw ECONNRESET on its next, valid request. Two requests
// pipelined on one raw socket make the outcome certain: both answers arrive, or the second never does.
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";

/** Writes `text` on a fresh connection and collects the status lines the server answers with, until `count` arrived or it closes. */
function statuses(url: string, text: string, count: number): Promise<number[]> {
  const { hostname, port } = new URL(url);
  return new Promise((resolvePromise, reject) => {
    const socket = connect(Number(port), hostname);
    let received = "";
    const found = (): number[] => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (found().length >= count) {
        socket.destroy();
        resolvePromise(found());
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolvePromise(found()));
    socket.write(text);
  });
}

describe.each(HOSTS)("keep-alive after an early refusal (%s host)", (kind) => {
  let h: ModelHost;
  beforeAll(async () => {
    h = await startModelHost(kind);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it("answers the next request on the connection after refusing a submission without its client-id header", async () => {
    const sessionId = await h.createSession();
    const { host } = new URL(h.url);
    const body = JSON.stringify({ delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "who am I?" }] });
    const refused = [
      `POST /v1/servers/${h.server}/sessions/${sessionId}/prompts HTTP/1.1`,
      `Host: ${host}`,
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "",
      body,
    ].join("\r\n");
    const next = [`GET /v1/health HTTP/1.1`, `Host: ${host}`, "", ""].join("\r\n");
    expect(await statuses(h.url, refused + next, 2)).toEqual([400, 200]);
  });

  it("answers the next request on the connection after refusing a method the path does not take", async () => {
    const { host } = new URL(h.url);
    const body = JSON.stringify({ title: "never" });
    const refused = [`PUT /v1/servers/${h.server}/sessions HTTP/1.1`, `Host: ${host}`, "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`, "", body].join("\r\n");
    const next = [`GET /v1/health HTTP/1.1`, `Host: ${host}`, "", ""].join("\r\n");
    const [first, second] = await statuses(h.url, refused + next, 2);
    expect(first).toBeGreaterThanOrEqual(400);
    expect(second).toBe(200);
  });

  it("answers the next request on the connection after refusing a Session id that does not decode", async () => {
    // The Worker's gateway refuses this one itself, before any server object sees it.
    const { host } = new URL(h.url);
    const body = JSON.stringify({ delivery: "queue", turnId: randomUUID(), prompt: [{ type: "text", text: "never" }] });
    const refused = [`POST /v1/servers/${h.server}/sessions/%ZZ/prompts HTTP/1.1`, `Host: ${host}`, "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`, "", body].join("\r\n");
    const next = [`GET /v1/health HTTP/1.1`, `Host: ${host}`, "", ""].join("\r\n");
    const [first, second] = await statuses(h.url, refused + next, 2);
    expect(first).toBeGreaterThanOrEqual(400);
    expect(second).toBe(200);
  });
});
