// The Node host's transport over a real loopback server: what it derives from the endpoint once
// (the Host header, a URL's user:password as Basic authorization, the path and query), the
// headers it is given sent as given, and an abort — before the request or while the body
// streams — ending it.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeTransport } from "../../services/providers/node-transport.js";

let server: Server;
let port = 0;
const seen: { method?: string; url?: string; headers?: IncomingMessage["headers"]; body?: string }[] = [];
const streaming = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      seen.push({ method: request.method, url: request.url, headers: request.headers, body });
      if (request.url?.startsWith("/stream")) {
        // Sends one event and holds the response open until the client goes away.
        response.writeHead(200, { "content-type": "text/event-stream" });
        response.write("data: {}\n\n");
        streaming.add(response);
        response.on("close", () => streaming.delete(response));
        return;
      }
      response.writeHead(200, { "content-type": "text/plain", "x-request-id": "req_1" });
      response.end("done");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
});

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  let out = "";
  for await (const chunk of body) out += Buffer.from(chunk).toString("utf8");
  return out;
}

describe("nodeTransport", () => {
  it("sends the path, query, body and given headers, the Host of the URL, and a URL's user:password as Basic authorization", async () => {
    const send = { url: `http://user:pa%20ss@127.0.0.1:${port}/v1/chat?x=1`, headers: { accept: "application/json", "x-static": "yes" }, body: '{"a":"é"}', signal: new AbortController().signal };
    for (let round = 0; round < 2; round += 1) {
      seen.length = 0;
      const answer = await nodeTransport(send);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("x-request-id")).toBe("req_1");
      expect(await text(answer.body)).toBe("done");
      expect(seen).toHaveLength(1);
      expect(seen[0]!.method).toBe("POST");
      expect(seen[0]!.url).toBe("/v1/chat?x=1");
      expect(seen[0]!.body).toBe('{"a":"é"}');
      expect(seen[0]!.headers).toMatchObject({
        host: `127.0.0.1:${port}`,
        accept: "application/json",
        "x-static": "yes",
        "content-length": String(Buffer.byteLength('{"a":"é"}')),
        authorization: `Basic ${Buffer.from("user:pa ss").toString("base64")}`,
      });
    }
  });

  it("keeps a given authorization header over the URL's user:password", async () => {
    seen.length = 0;
    const answer = await nodeTransport({ url: `http://user:pw@127.0.0.1:${port}/v1`, headers: { authorization: "Bearer k" }, body: "{}", signal: new AbortController().signal });
    await text(answer.body);
    expect(seen[0]!.headers?.authorization).toBe("Bearer k");
  });

  it("refuses a header value node:http would not send, and a scheme that is not http(s)", async () => {
    await expect(nodeTransport({ url: `http://127.0.0.1:${port}/v1`, headers: { "x-bad": "a\r\nb" }, body: "{}", signal: new AbortController().signal })).rejects.toThrow();
    await expect(nodeTransport({ url: "ftp://127.0.0.1/v1", headers: {}, body: "{}", signal: new AbortController().signal })).rejects.toThrow(/not http or https/);
  });

  it("rejects at once when the signal already aborted, and ends a streaming body when it aborts", async () => {
    const before = new AbortController();
    before.abort(new Error("stop"));
    await expect(nodeTransport({ url: `http://127.0.0.1:${port}/v1`, headers: {}, body: "{}", signal: before.signal })).rejects.toMatchObject({ name: "AbortError" });

    const controller = new AbortController();
    const answer = await nodeTransport({ url: `http://127.0.0.1:${port}/stream`, headers: {}, body: "{}", signal: controller.signal });
    const chunks: string[] = [];
    const reading = (async () => {
      for await (const chunk of answer.body) {
        chunks.push(Buffer.from(chunk).toString("utf8"));
        controller.abort(new Error("cancelled"));
      }
    })();
    await expect(reading).rejects.toThrow();
    expect(chunks.join("")).toBe("data: {}\n\n");
  });
});
