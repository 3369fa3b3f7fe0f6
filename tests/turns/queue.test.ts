// Admission and the queue: one running Turn per Session in sequence order, Sessions in
// parallel, replayable receipts and conflicts, refused submissions that admit nothing, stable
// history pages, and the automatic Session title — on the Node host and on the Worker host in
// workerd (tests/support/hosts.ts); what needs a Node config key is Node-only, its reason said.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { failure, ok } from "../support/calls.js";
import { HOSTS, startModelHost, type ModelHost } from "../support/hosts.js";
import { startModelHarness, type ModelHarness } from "../support/model.js";
import { type Api, getSession, getTurn, holdReplies, listTurns, queue, runToEnd, seen, server, submitCall, text } from "./helpers.js";


let h: ModelHost;


const lastUserText = (body: unknown): string => {
  const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
  return JSON.stringify(messages.filter((message) => message.role === "user").at(-1));
};

/** Everything a refused submission must leave untouched. */
async function admissionState(sessionId: string, on: Api = h) {
  const session = await getSession(on, sessionId);
  const page = await listTurns(on, sessionId);
  return { nextSequence: session.nextSequence, turns: page.turns.map((state) => state.turn.id), title: session.title };
}


describe.each(HOSTS)("on the %s host", (kind) => {
  beforeAll(async () => {
    h = await startModelHost(kind);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    // Each test scripts its own answers; none may leak into the next.
    h.model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
  });

  describe("the queue", () => {
    it("runs one Turn per Session at a time, queued Turns in sequence order", async () => {
      const model = holdReplies(h, (request) => ({ events: [{ type: "text", text: `answer to ${lastUserText(request.body)}` }] }));
      const before = h.model.requests.length;
      const sessionId = await h.createSession();
      const receipts = [await queue(h, sessionId, "first"), await queue(h, sessionId, "second"), await queue(h, sessionId, "third")];
      expect(receipts.map((receipt) => receipt.sequence)).toEqual([1, 2, 3]);
      await model.held(1);
      expect(await Promise.all(receipts.map(async (receipt) => (await getTurn(h, sessionId, receipt.turnId)).phase))).toEqual(["running", "pending", "pending"]);
      model.release(1);
      await model.held(2);
      expect((await getTurn(h, sessionId, receipts[0]!.turnId)).phase).toBe("completed");
      expect((await getTurn(h, sessionId, receipts[2]!.turnId)).phase).toBe("pending");
      model.release(2);
      model.release(3);
      const turns = [];
      for (const receipt of receipts) turns.push((await runToEnd(h, sessionId, receipt.turnId)).turn);
      const prompts = h.model.requests.slice(before).map((request) => lastUserText(request.body));
      expect(prompts.map((prompt) => ["first", "second", "third"].find((word) => prompt.includes(word)))).toEqual(["first", "second", "third"]);
      for (let index = 1; index < turns.length; index++) expect(turns[index]!.startedAt).toBeGreaterThanOrEqual(turns[index - 1]!.completedAt!);
      // The later Turns saw the earlier Turns' history.
      expect(seen(h.model.requests.at(-1))).toContain("answer to");
    });

    it("admits concurrent submissions with distinct sequences and runs them in that order", async () => {
      h.model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
      const sessionId = await h.createSession();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, index) => ok(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text(`parallel ${index}`) }))),
      );
      const sequences = results.map((result) => result.receipt.sequence);
      expect([...sequences].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const page = await listTurns(h, sessionId);
      for (const state of page.turns) await runToEnd(h, sessionId, state.turn.id);
      const turns = (await listTurns(h, sessionId)).turns.map((state) => state.turn);
      expect(turns.map((turn) => [turn.sequence, turn.phase])).toEqual(sequences.sort((a, b) => a - b).map((sequence) => [sequence, "completed"]));
      for (let index = 1; index < turns.length; index++) expect(turns[index]!.startedAt).toBeGreaterThanOrEqual(turns[index - 1]!.completedAt!);
    });

    it("runs Turns of two Sessions at the same time", async () => {
      const model = holdReplies(h, () => ({ events: [{ type: "text", text: "parallel" }] }));
      const [a, b] = [await h.createSession(), await h.createSession()];
      const [ta, tb] = [await queue(h, a, "in a"), await queue(h, b, "in b")];
      // Both model requests are outstanding before either is answered.
      await Promise.all([model.held(1), model.held(2)]);
      expect((await getTurn(h, a, ta.turnId)).phase).toBe("running");
      expect((await getTurn(h, b, tb.turnId)).phase).toBe("running");
      model.release(1);
      model.release(2);
      expect((await runToEnd(h, a, ta.turnId)).turn.phase).toBe("completed");
      expect((await runToEnd(h, b, tb.turnId)).turn.phase).toBe("completed");
    });
  });

  describe("admission", () => {
    it("replays the same body to the identical receipt; a different body is a 409 ConflictError that admits nothing", async () => {
      const sessionId = await h.createSession();
      const body = { delivery: "queue", turnId: randomUUID(), prompt: text("replay me"), authorId: "ada" };
      const first = await ok(submitCall(h, sessionId, body));
      expect(first.receipt).toMatchObject({ delivery: "queue", sessionId, turnId: body.turnId, sequence: 1, attribution: { clientId: "test-client", authorId: "ada" } });
      const again = await ok(submitCall(h, sessionId, body));
      expect(again).toEqual(first);
      const before = await admissionState(sessionId);
      const changed = await failure(submitCall(h, sessionId, { ...body, prompt: text("something else") }));
      expect(changed).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
      // The same Turn id in another Session is the same identity: a conflict too.
      const other = await h.createSession();
      expect(await failure(submitCall(h, other, body))).toMatchObject({ status: 409, body: { _tag: "ConflictError" } });
      expect(await admissionState(sessionId)).toEqual(before);
      expect((await listTurns(h, other)).turns).toEqual([]);
      await runToEnd(h, sessionId, body.turnId);
      // A replay after the Turn finished still answers the original receipt.
      expect(await ok(submitCall(h, sessionId, body))).toEqual(first);
    });

    it("an unknown model is a 503 UnavailableError (model_unavailable) and admits nothing", async () => {
      const sessionId = await h.createSession();
      const before = await admissionState(sessionId);
      const refused = await failure(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text("hi"), model: "test/nope" }));
      expect(refused).toMatchObject({ status: 503, body: { _tag: "UnavailableError", reason: "model_unavailable" } });
      const unknownProvider = await failure(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text("hi"), model: "nobody/model" }));
      expect(unknownProvider).toMatchObject({ status: 503, body: { _tag: "UnavailableError", reason: "model_unavailable" } });
      // A Session whose default model is unknown refuses the same way.
      const stale = await h.createSession({ defaultModel: "test/gone" });
      expect(await failure(submitCall(h, stale, { delivery: "queue", turnId: randomUUID(), prompt: text("hi") }))).toMatchObject({ status: 503 });
      expect(await admissionState(sessionId)).toEqual(before);
      expect((await listTurns(h, stale)).turns).toEqual([]);
    });

    it("admits from the Session as it is now, not as an earlier prompt left it (a changed default model)", async () => {
      // The first prompt leaves the Session's row as the next admission's hint (services/core/turns/session-hints.ts).
      const sessionId = await h.createSession({ defaultModel: "test/scripted" });
      const first = await queue(h, sessionId, "first");
      expect((await runToEnd(h, sessionId, first.turnId)).turn.model).toBe("test/scripted");
      const setModel = (defaultModel: string) => ok(sdk.setSessionDefaultModel({ client: h.api.client, path: { server, sessionId }, body: { defaultModel } }));
      await setModel("test/gone");
      const before = await admissionState(sessionId);
      expect(await failure(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: text("second") }))).toMatchObject({ status: 503 });
      expect(await admissionState(sessionId)).toEqual(before);
      await setModel("test/scripted");
      const third = await queue(h, sessionId, "third");
      expect((await runToEnd(h, sessionId, third.turnId)).turn.model).toBe("test/scripted");
    });

    it.each([
      ["an empty prompt list", { prompt: [] }],
      ["a prompt of blank text only", { prompt: text("  \n\t ") }],
      ["a turnId that is not a uuid", { turnId: "not-a-uuid" }],
      ["an unknown delivery", { delivery: "later" }],
      ["an image whose base64 data is not base64", { prompt: [{ type: "image", source: { type: "base64", mimeType: "image/png", data: "!!!" } }] }],
      ["a javascript: image URL", { prompt: [...text("Look"), { type: "image", source: { type: "url", url: "javascript:alert(1)" } }] }],
      ["a file: image URL", { prompt: [...text("Look"), { type: "image", source: { type: "url", url: "file:///etc/passwd" } }] }],
      ["an image URL that is not a URL", { prompt: [...text("Look"), { type: "image", source: { type: "url", url: "not a url" } }] }],
      ["a model without a provider", { model: "scripted" }],
    ])("refuses %s with a 400 ValidationError and admits nothing", async (_name, override) => {
      const sessionId = await h.createSession();
      const before = await admissionState(sessionId);
      const body = { delivery: "queue", turnId: randomUUID(), prompt: text("valid"), ...override };
      expect(await failure(submitCall(h, sessionId, body))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
      expect(await admissionState(sessionId)).toEqual(before);
    });

    it("names the field and what is allowed for a bad image URL", async () => {
      const sessionId = await h.createSession();
      const url = await failure(submitCall(h, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: [...text("Look"), { type: "image", source: { type: "url", url: "javascript:alert(1)" } }] }));
      expect(url.body.message).toBe("Invalid request: /prompt/1/source/url must be an http:, https: or data: URL, not javascript:");
    });

    it("accepts http(s) and data: image URLs", async () => {
      h.model.enqueue({ events: [{ type: "text", text: "Seen." }] });
      const sessionId = await h.createSession();
      const prompt = [...text("Look"), { type: "image", source: { type: "url", url: "https://example.invalid/a.png" } }, { type: "image", source: { type: "url", url: "data:image/png;base64,iVBORw0KGgo=" } }];
      const { turnId } = await queue(h, sessionId, "Look", { prompt });
      expect((await runToEnd(h, sessionId, turnId)).turn.phase).toBe("completed");
    });

    it("refuses a submission without the client-id header with a 400 and admits nothing", async () => {
      const sessionId = await h.createSession();
      const before = await admissionState(sessionId);
      const body = { delivery: "queue", turnId: randomUUID(), prompt: text("who am I?") };
      expect(await failure(submitCall(h, sessionId, body, null))).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
      expect(await admissionState(sessionId)).toEqual(before);
    });

    it("accepts a base64 image within the limit", async () => {
      h.model.enqueue({ events: [{ type: "text", text: "A small image." }] });
      const sessionId = await h.createSession();
      const { turnId } = await queue(h, sessionId, "Look", { prompt: [...text("Look"), { type: "image", source: { type: "base64", mimeType: "image/png", data: "iVBORw0KGgo=" } }] });
      expect((await runToEnd(h, sessionId, turnId)).turn.phase).toBe("completed");
      expect(seen(h.model.requests.at(-1))).toContain("iVBORw0KGgo=");
    });

    it("refuses a Turn for an unknown Session with a 404", async () => {
      const refused = await failure(submitCall(h, randomUUID(), { delivery: "queue", turnId: randomUUID(), prompt: text("hi") }));
      expect(refused).toMatchObject({ status: 404, body: { _tag: "NotFoundError" } });
    });
  });

  describe("listSessionTurns", () => {
    it("pages by afterSequence under a fixed boundary while new Turns arrive", async () => {
      h.model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
      const sessionId = await h.createSession();
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) ids.push((await queue(h, sessionId, `turn ${index + 1}`)).turnId);
      for (const id of ids) await runToEnd(h, sessionId, id);

      const first = await listTurns(h, sessionId, { limit: "2" });
      expect(first.sessionId).toBe(sessionId);
      expect(first.turns.map((state) => state.turn.id)).toEqual(ids.slice(0, 2));
      expect(first.turns.map((state) => state.workSequence)).toEqual([1, 2]);
      expect(first.nextAfterSequence).toBe(2);
      expect(first.boundary.throughSequence).toBe(5);
      for (const state of first.turns) {
        expect(state.turn.phase).toBe("completed");
        expect(state.activityCursor).toBeLessThanOrEqual(first.boundary.activityCursor);
      }

      // A new Turn arrives; pages read under the first page's fence do not show it.
      const late = await queue(h, sessionId, "late");
      const fence = { throughSequence: String(first.boundary.throughSequence), snapshotActivityCursor: String(first.boundary.activityCursor) };
      const second = await listTurns(h, sessionId, { limit: "2", afterSequence: String(first.nextAfterSequence), ...fence });
      expect(second.turns.map((state) => state.turn.id)).toEqual(ids.slice(2, 4));
      expect(second.boundary).toEqual(first.boundary);
      expect(second.nextAfterSequence).toBe(4);
      const third = await listTurns(h, sessionId, { limit: "2", afterSequence: String(second.nextAfterSequence), ...fence });
      expect(third.turns.map((state) => state.turn.id)).toEqual([ids[4]]);
      expect(third.nextAfterSequence).toBeUndefined();

      // Without the fence the new Turn is there.
      await runToEnd(h, sessionId, late.turnId);
      const fresh = await listTurns(h, sessionId, { afterSequence: "4" });
      expect(fresh.turns.map((state) => state.turn.id)).toEqual([ids[4], late.turnId]);
      expect(fresh.boundary.throughSequence).toBe(6);
      expect(fresh.nextAfterSequence).toBeUndefined();
    });

    it("refuses bad paging values with a 400", async () => {
      const sessionId = await h.createSession();
      for (const query of [{ limit: "0" }, { limit: "ten" }, { afterSequence: "-1" }]) {
        expect(await failure(sdk.listSessionTurns({ client: h.api.client, path: { server, sessionId }, query }))).toMatchObject({ status: 400 });
      }
      const huge = await failure(sdk.listSessionTurns({ client: h.api.client, path: { server, sessionId }, query: { limit: "99999999999999999999" } }));
      expect(huge).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
      expect(huge.body.message).toMatch(/query\.limit.*too large/);
      expect(huge.body.message).not.toContain("at least");
    });
  });

  describe("automatic Session title", () => {
    it("titles an untitled Session from its first prompt's first line, once", async () => {
      h.model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
      const sessionId = await h.createSession();
      expect((await getSession(h, sessionId)).title).toBeUndefined();
      const first = await queue(h, sessionId, "  \n  Fix the   flaky\ttest in parser.ts  \nwith details below");
      expect((await getSession(h, sessionId)).title).toBe("Fix the flaky test in parser.ts");
      const second = await queue(h, sessionId, "Something else entirely");
      expect((await getSession(h, sessionId)).title).toBe("Fix the flaky test in parser.ts");
      await runToEnd(h, sessionId, first.turnId);
      await runToEnd(h, sessionId, second.turnId);
    });

    it("cuts a long first line at a word, within the 100-character title limit", async () => {
      const sessionId = await h.createSession();
      const words = Array.from({ length: 40 }, (_, index) => `word${index}`).join(" ");
      const { turnId } = await queue(h, sessionId, words);
      const title = (await getSession(h, sessionId)).title!;
      expect(title.length).toBeLessThanOrEqual(100);
      expect(title.endsWith("…")).toBe(true);
      expect(words.startsWith(title.slice(0, -1))).toBe(true);
      expect(words[title.length - 1]).toBe(" ");
      await runToEnd(h, sessionId, turnId);
    });

    it("keeps a title the user set", async () => {
      const sessionId = await h.createSession();
      await ok(sdk.setSessionTitle({ client: h.api.client, path: { server, sessionId }, body: { title: "Mine" } }));
      const { turnId } = await queue(h, sessionId, "Another topic");
      expect((await getSession(h, sessionId)).title).toBe("Mine");
      await runToEnd(h, sessionId, turnId);
    });
  });
});

// Node only: images.maxBase64Bytes is a config.json key; the Worker has no variable for it.
describe("an image over images.maxBase64Bytes (Node host)", () => {
  let limited: ModelHarness;
  beforeAll(async () => {
    limited = await startModelHarness({ config: { images: { maxBase64Bytes: { kind: "finite", value: 16 } } } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it("is refused with a 400 ValidationError naming the field and the limit, and admits nothing", async () => {
    const sessionId = await limited.createSession();
    const before = await admissionState(sessionId, limited);
    const big = await failure(submitCall(limited, sessionId, { delivery: "queue", turnId: randomUUID(), prompt: [{ type: "image", source: { type: "base64", mimeType: "image/png", data: "A".repeat(20) } }] }));
    expect(big).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
    expect(big.body.message).toBe("Invalid request: /prompt/0/source/data is 20 bytes of base64; the limit (images.maxBase64Bytes) is 16");
    expect(await admissionState(sessionId, limited)).toEqual(before);
  });
});

// Node only: these start hosts with other config files and name the config file's path.
describe("admission without any model", () => {
  let bare: ModelHarness;
  beforeAll(async () => {
    // No `model` in the config (undefined is dropped from the JSON file).
    bare = await startModelHarness({ config: { model: undefined } });
  });
  afterAll(async () => {
    await bare.close();
  });

  it("uses the host's default model (the catalog's first available) when nothing names one", async () => {
    const sessionId = await bare.createSession();
    bare.model.enqueue({ events: [{ type: "text", text: "defaulted" }] });
    const turnId = randomUUID();
    await ok(
      sdk.submitPrompt({
        client: bare.api.client,
        path: { server, sessionId },
        headers: { "x-ze-harness-client-id": "test" },
        body: { delivery: "queue", turnId, prompt: text("hi") },
      }),
    );
    const { turn } = await bare.finish(sessionId, turnId);
    expect(turn.model).toBe("test/scripted");
    expect(turn.outcome).toMatchObject({ kind: "completed", text: "defaulted" });
  });

  it("is a 400 ValidationError when nothing names a model and no model is available", async () => {
    // The only provider needs a key nobody gave: the catalog has no available model.
    const keyless = await startModelHarness({
      config: (model) => ({
        model: undefined,
        providers: { keyed: { definition: { baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "bearer" }, credentials: { environment: ["ZE_TEST_NO_SUCH_KEY"] }, models: { scripted: { displayName: "Scripted" } } } } },
      }),
    });
    try {
      const sessionId = await keyless.createSession();
      const refused = await failure(
        sdk.submitPrompt({
          client: keyless.api.client,
          path: { server, sessionId },
          headers: { "x-ze-harness-client-id": "test" },
          body: { delivery: "queue", turnId: randomUUID(), prompt: text("hi") },
        }),
      );
      expect(refused).toMatchObject({ status: 400, body: { _tag: "ValidationError" } });
      // The message says every way to name one: the request (the CLI's --model) and the config file.
      expect(refused.body.message).toContain("--model PROVIDER/MODEL");
      expect(refused.body.message).toContain(join(keyless.home.env["XDG_CONFIG_HOME"]!, "ze-harness", "config.json"));
      const page = await ok(sdk.listSessionTurns({ client: keyless.api.client, path: { server, sessionId } }));
      expect(page.turns).toEqual([]);
    } finally {
      await keyless.close();
    }
  });
});
