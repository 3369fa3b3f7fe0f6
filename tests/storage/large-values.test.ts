import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { queue, runToEnd } from "../turns/helpers.js";

describe.each(HOSTS)("on the %s host", (kind) => {
  let h: ModelHost;
  beforeAll(async () => {
    h = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  it("3 MB", async () => {
    const answer = `${"w".repeat(999)} `.repeat(3_000).trim();
    h.model.enqueue({ events: [{ type: "text", text: answer }] });
    const sessionId = await h.createSession();
    const { turnId } = await queue(h, sessionId, "Say a lot");
    const { turn } = await runToEnd(h, sessionId, turnId);
    console.log(JSON.stringify(turn.outcome).slice(0, 2000));
    expect(turn.outcome).toMatchObject({ kind: "completed" });
  }, 60_000);
});
