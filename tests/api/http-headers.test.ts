// Header parameters are bounded as the contract bounds what they become: x-ze-harness-client-id
// is recorded as Attribution.clientId (at most 256 characters), so a longer one is a 400 naming
// the header, not an admitted prompt whose receipt then breaks the contract (found by the
// contract fuzzer: a 300-character client id came back in appendConversation's receipt).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { harnessPerTest } from "../support/harness.js";

const base = "http://localhost";
const harness = harnessPerTest();

const append = (sessionId: string, clientId: string): Promise<Response> =>
  harness().fetch(
    new Request(`${base}/v1/servers/local/sessions/${sessionId}/conversation`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-ze-harness-client-id": clientId },
      body: JSON.stringify({ entryId: randomUUID(), content: [{ type: "text", text: "outside context" }] }),
    }),
  );

describe("x-ze-harness-client-id", () => {
  it("257 characters are refused naming the header; 256 are recorded as given", async () => {
    const sessionId = randomUUID();
    const created = await harness().fetch(new Request(`${base}/v1/servers/local/sessions/${sessionId}`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" }));
    expect(created.status).toBe(200);
    const refused = await append(sessionId, "c".repeat(257));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ _tag: "ValidationError", message: expect.stringMatching(/^Invalid request: headers\.x-ze-harness-client-id \(\/x-ze-harness-client-id\): /) });
    const accepted = await append(sessionId, "c".repeat(256));
    expect(accepted.status).toBe(200);
    expect((await accepted.json()).receipt.attribution.clientId).toBe("c".repeat(256));
  });
});
