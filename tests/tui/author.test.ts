// Authorship in the TUI: prompts carry this machine's stable author identity (`author-id`, 0600,
// in the durable state directory) and show as `you` from any later connection; another writer's
// author ID shows short; entries without one fall back to the connection match.
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createZeClient, sdk, unwrap } from "../../clients/index.js";
import { author } from "../../cli/tui/components/turn-view.js";
import { authorIdentity } from "../../cli/tui/state/author.js";
import { tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest();

describe("the author identity", () => {
  it("a prompt carries it; a later TUI on another connection shows that prompt as `you`, another author's short ID otherwise", async () => {
    const h = harness();
    const stateDir = join(h.home.env["XDG_DATA_HOME"]!, "ze-harness");
    const first = await open();
    await first.submit("@say first answer");
    await first.waitFor(/first answer[\s\S]*test\/scripted · \d/);
    const sessionId = first.controller.sessionId!;
    first.unmount();

    const identity = readFileSync(join(stateDir, "author-id"), "utf8").trim();
    expect(identity).toMatch(/^[0-9a-f-]{36}$/);
    expect(statSync(join(stateDir, "author-id")).mode & 0o777).toBe(0o600);
    const turns = await unwrap(sdk.listSessionTurns({ client: h.api.client, path: { server: "local", sessionId } }));
    expect(turns.turns[0]!.turn.attribution).toMatchObject({ authorId: identity });

    // Another author writes a Turn into the Session.
    const other = "0b7e1f6a-1111-4222-8333-944455556666";
    await unwrap(
      sdk.submitPrompt({
        client: h.api.client,
        path: { server: "local", sessionId },
        headers: { "x-ze-harness-client-id": "someone-else/1" },
        body: { delivery: "queue", turnId: crypto.randomUUID(), prompt: [{ type: "text", text: "@say second answer" }], authorId: other },
      }),
    );

    // A new connection (another clientId): the first prompt is still `you`, the other author's is not.
    const reopened = await open({ sessionId, client: createZeClient({ baseUrl: "http://localhost", fetch: (request: Request) => h.harness.fetch(request), clientId: "ze-harness-cli/another-process" }) });
    const frame = await reopened.waitFor(/second answer[\s\S]*test\/scripted · \d[\s\S]*test\/scripted · \d|first answer[\s\S]*second answer[\s\S]*test\/scripted/);
    expect(frame).toMatch(/› you @say first answer/);
    expect(frame).toMatch(/› 0b7e1f6a @say second answer/);
  });

  it("is created once and reused; a damaged file is not trusted", () => {
    const dir = join(harness().home.dir, "state");
    const made = authorIdentity(dir);
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    expect(authorIdentity(dir)).toBe(made);
    expect(author({ clientId: "c/1", authorId: made! }, "c/2", made)).toBe("you");
    expect(author({ clientId: "c/1" }, "c/1", made)).toBe("you");
    expect(author({ clientId: "c/1" }, "c/2", made)).not.toBe("you");
    expect(author({ clientId: "c/2", authorId: "abcdef12-0000-4000-8000-000000000000" }, "c/2", made)).toBe("abcdef12");
    const damaged = join(harness().home.dir, "damaged");
    mkdirSync(damaged);
    writeFileSync(join(damaged, "author-id"), "not an id\n");
    expect(authorIdentity(damaged)).toBeUndefined();
    expect(readFileSync(join(damaged, "author-id"), "utf8")).toBe("not an id\n");
  });
});
