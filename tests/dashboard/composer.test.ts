// Acting on a Session from its view in Chromium, through the v1 operations the CLI uses: Send
// starts a Turn, Queue puts a follow-up behind the running one, Steer reaches the running Turn
// before its next model request, Cancel ends it — asserted on the Turns the server ran, on the
// requests the scripted model received and on the page's client id. A refusal from the server
// (a steer that arrives after its Turn ended: 409 TurnNotActiveError) is shown on the page.
import { describe, expect, it } from "vitest";
import { sdk, unwrap, type SteeringTurnPart } from "../../clients/index.js";
import type { RecordedRequest } from "../../tools/test-model/index.js";
import { deferred, SERVER } from "./support.js";
import { dashboardSuite } from "./suite.js";

const suite = dashboardSuite();
const seen = (request: RecordedRequest | undefined): string => JSON.stringify(request?.body ?? null);
const text = (value: string) => ({ events: [{ type: "text" as const, text: value }] });

describe("the Session view's composer", () => {
  it("sends a prompt, queues a follow-up, steers the running Turn and cancels the next, through the v1 API", async () => {
    const { server } = suite;
    const sessionId = await server.createSession();
    const before = server.model.requests.length;
    const firstRound = deferred();
    const followUp = deferred();
    server.model.reply(async (request) => {
      const body = seen(request);
      if (body.includes("Follow up FOLLOW-Q3")) {
        await followUp.promise; // held until the test has cancelled it
        return text("Too late.");
      }
      if (body.includes("STEER-D7")) return text("Answer with STEER-D7 in mind.");
      await firstRound.promise;
      return text("First answer.");
    });
    const { page, requests } = await suite.open(`#/sessions/${sessionId}`);
    const prompt = page.locator("#prompt");
    const send = page.locator('[data-action="send"]');
    const steer = page.locator('[data-action="steer"]');
    const cancel = page.locator('[data-action="cancel"]');
    const state = page.locator("[data-composer-state]");
    const note = page.locator("[data-composer-note]");
    await page.locator("#session-view .composer").waitFor();
    expect(await state.textContent()).toBe("idle");
    expect(await send.textContent()).toBe("Send");
    expect(await send.isDisabled()).toBe(true); // nothing typed
    expect(await cancel.isDisabled()).toBe(true); // nothing running

    // Send: a Turn starts and reaches the model.
    await prompt.fill("Start the work WORK-S1");
    await send.click();
    await note.getByText("Started Turn #1.").waitFor();
    expect(await prompt.inputValue()).toBe("");
    await server.model.waitForRequest(before + 1);
    const { turns } = await unwrap(sdk.listSessionTurns({ client: server.api.client, path: { server: SERVER, sessionId } }));
    expect(turns).toHaveLength(1);
    const first = turns[0]!.turn;
    expect(first).toMatchObject({ sequence: 1, attribution: { clientId: "ze-harness-dashboard" }, request: { prompt: [{ type: "text", text: "Start the work WORK-S1" }] } });
    await page.locator(`[data-turn-id="${first.id}"][data-phase="running"]`).waitFor();
    await state.getByText("Turn #1 running").waitFor();
    expect(await send.textContent()).toBe("Queue");

    // Queue (Ctrl+Enter in the box): a second Turn waits behind the running one.
    await prompt.fill("Follow up FOLLOW-Q3");
    await prompt.press("Control+Enter");
    await note.getByText("Queued as Turn #2.").waitFor();
    await state.getByText("Turn #1 running · 1 queued").waitFor();
    const queued = (await unwrap(sdk.listSessionTurns({ client: server.api.client, path: { server: SERVER, sessionId } }))).turns.map(({ turn }) => turn);
    expect(queued.map((turn) => [turn.sequence, turn.phase])).toEqual([[1, "running"], [2, "pending"]]);
    const second = queued[1]!;
    expect(second.attribution?.clientId).toBe("ze-harness-dashboard");
    await page.locator(`[data-turn-id="${second.id}"][data-phase="pending"]`).waitFor();

    // Steer: joins the running Turn before its next model request, which sees it.
    await prompt.fill("Also mention STEER-D7.");
    await steer.click();
    await note.getByText("Steer sent to Turn #1").waitFor();
    firstRound.resolve();
    const steered = page.locator(`[data-turn-id="${first.id}"]`);
    await steered.locator('[data-outcome="completed"]').waitFor();
    expect(await steered.locator(".part.steering").textContent()).toContain("Also mention STEER-D7.");
    await steered.getByText("Answer with STEER-D7 in mind.").waitFor();
    expect(seen(server.model.requests[before])).toContain("WORK-S1");
    expect(seen(server.model.requests[before])).not.toContain("STEER-D7");
    expect(seen(server.model.requests[before + 1])).toContain("STEER-D7");
    const { turn: firstFinal } = await unwrap(sdk.getTurn({ client: server.api.client, path: { server: SERVER, sessionId, turnId: first.id } }));
    expect(firstFinal.parts.map((part) => part.type)).toEqual(["text", "steering", "text"]);
    expect((firstFinal.parts[1] as SteeringTurnPart).steers[0]).toMatchObject({ prompt: [{ type: "text", text: "Also mention STEER-D7." }] });

    // The queued Turn runs next; Cancel ends it while the model is still answering.
    await server.model.waitForRequest(before + 3);
    expect(seen(server.model.requests[before + 2])).toContain("Follow up FOLLOW-Q3");
    await page.locator(`[data-turn-id="${second.id}"][data-phase="running"]`).waitFor();
    await state.getByText("Turn #2 running").waitFor();
    await cancel.click();
    await note.getByText("Cancelled Turn #2.").waitFor();
    await page.locator(`[data-turn-id="${second.id}"] [data-outcome="cancelled"]`).waitFor();
    await state.getByText("idle").waitFor();
    const { turn: secondFinal } = await unwrap(sdk.getTurn({ client: server.api.client, path: { server: SERVER, sessionId, turnId: second.id } }));
    expect(secondFinal).toMatchObject({ phase: "cancelled", cancellation: { reason: "cancelled from the dashboard" } });
    followUp.resolve();

    // Every submit carried the page's client id; the cancel went to the Turn's cancel operation.
    const posts = requests.filter((request) => request.method() === "POST");
    const prompts = posts.filter((request) => new URL(request.url()).pathname === `/v1/servers/local/sessions/${sessionId}/prompts`);
    expect(prompts.map((request) => (request.postDataJSON() as { delivery: string }).delivery)).toEqual(["queue", "queue", "steer"]);
    for (const request of prompts) expect(request.headers()["x-ze-harness-client-id"]).toBe("ze-harness-dashboard");
    expect(posts.some((request) => new URL(request.url()).pathname === `/v1/servers/local/sessions/${sessionId}/turns/${second.id}/cancel`)).toBe(true);
  });

  it("shows the server's refusal: a steer that reaches the server after its Turn ended answers 409 TurnNotActiveError", async () => {
    const { server } = suite;
    const sessionId = await server.createSession();
    const held = deferred();
    server.model.reply(async () => {
      await held.promise;
      return text("Done.");
    });
    const before = server.model.requests.length;
    const turnId = await server.submit(sessionId, "Run for a while");
    await server.model.waitForRequest(before + 1);
    const { page } = await suite.open(`#/sessions/${sessionId}`);
    await page.locator(`[data-turn-id="${turnId}"][data-phase="running"]`).waitFor();

    // The steer leaves the page while the Turn runs, but reaches the server only after it ended.
    const sent = deferred();
    const gate = deferred();
    await page.route(
      (url) => url.pathname === `/v1/servers/local/sessions/${sessionId}/prompts`,
      async (route) => {
        sent.resolve();
        await gate.promise;
        await route.continue();
      },
    );
    await page.locator("#prompt").fill("Too late STEER-L9");
    await page.locator('[data-action="steer"]').click();
    await sent.promise;
    await unwrap(sdk.cancelTurn({ client: server.api.client, path: { server: SERVER, sessionId, turnId }, body: { reason: "ended by the test" } }));
    gate.resolve();

    const note = page.locator('[data-composer-note][role="alert"]');
    await note.getByText("TurnNotActiveError").waitFor();
    expect(await note.textContent()).toBe(`TurnNotActiveError: Turn ${turnId} is not the Session's running Turn`);
    expect(await note.getAttribute("data-kind")).toBe("error");
    expect(await page.locator("#prompt").inputValue()).toBe("Too late STEER-L9"); // kept for another try
    await page.locator(`[data-turn-id="${turnId}"] [data-outcome="cancelled"]`).waitFor();
    expect(await page.locator('[data-action="steer"]').isDisabled()).toBe(true);
    held.resolve();
    const { turn } = await unwrap(sdk.getTurn({ client: server.api.client, path: { server: SERVER, sessionId, turnId } }));
    expect(turn.steering.steers).toEqual([]);
    expect(server.model.requests.slice(before).map(seen).join("")).not.toContain("STEER-L9");
  });
});
