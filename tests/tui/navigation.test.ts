// Sub-agent navigation (/subagents and Ctrl+X G open a child, /back and Esc return), Ctrl+X C
// compaction, and the reconnect rule: a long outage shows `Reconnecting` with its error until
// the stream catches up.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createZeClient, sdk, unwrap } from "../../clients/index.js";
import { App } from "../../cli/tui/app.js";
import { createController } from "../../cli/tui/run.js";
import { Preferences } from "../../cli/tui/state/preferences.js";
import { createElement } from "react";
import { render } from "ink-testing-library";
import { KEY, tuiPerTest } from "./support.js";

const { harness, open } = tuiPerTest();

const childPrompt = "@say The child looked around.";
const delegate = `@call task {"description":"Look around","subagent_type":"general","prompt":${JSON.stringify(childPrompt)}}\n@then The parent is done.`;

describe("sub-agents", () => {
  it("/subagents lists the children; Enter opens one, the header marks it, /back returns to the parent", async () => {
    const tui = await open();
    await tui.submit(delegate);
    await tui.waitFor(/The parent is done\.[\s\S]*test\/scripted · \d/);
    const parent = tui.controller.sessionId!;
    await tui.submit("/subagents");
    await tui.waitFor(/Sub-agents[\s\S]*› general/);
    await tui.press(KEY.enter);
    const child = await tui.waitFor(/The child looked around\.[\s\S]*sub-agent general/);
    // The scrollback keeps the parent's history above; below it, the child's alone.
    expect(child.slice(child.lastIndexOf("› subagent"))).not.toContain("The parent is done.");
    expect(tui.controller.sessionId).not.toBe(parent);
    await tui.submit("/back");
    await tui.until(() => tui.controller.sessionId === parent);
    await tui.waitFor(/The parent is done\./);
  });

  it("Ctrl+X ↓ opens the first sub-agent directly and Esc returns to the parent", async () => {
    const tui = await open();
    await tui.submit(delegate);
    await tui.waitFor(/The parent is done\.[\s\S]*test\/scripted · \d/);
    const parent = tui.controller.sessionId!;
    await tui.press(KEY.ctrlX, KEY.down);
    await tui.waitFor(/sub-agent general/);
    await tui.press(KEY.escape);
    await tui.until(() => tui.controller.sessionId === parent);
  });

  it("a sub-agent's permission request appears inline in the parent's view and is answered there", async () => {
    const h = harness();
    const outside = join(h.home.dir, "outside");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "note.txt"), "outside");
    const child = `@call read {"filePath":"${join(outside, "note.txt")}"}\n@then The child read the note.`;
    const tui = await open();
    await tui.submit(`@call task {"description":"Read the note","subagent_type":"general","prompt":${JSON.stringify(child)}}\n@then The parent saw the child finish.`);
    const asked = await tui.waitFor(/Permission \(sub-agent general\): external_directory/);
    expect(asked).toContain("Approval required");
    await tui.press(KEY.enter);
    await tui.waitFor(/The parent saw the child finish\.[\s\S]*test\/scripted · \d/);
  });

  it("a task row shows its sub-agent's summary: tool-call count and duration once it settled", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "notes.txt"), "notes");
    const child = '@call read {"filePath":"notes.txt"}\n@then The child read the notes.';
    const tui = await open();
    await tui.submit(`@call task {"description":"Read notes","subagent_type":"general","prompt":${JSON.stringify(child)}}\n@then Parent finished.`);
    await tui.waitFor(/✓ task Read notes · 1 tool call · \d[\d.]*m?s/);
    await tui.waitFor(/Parent finished\.[\s\S]*test\/scripted · \d/);
  });

  it("/back in a top-level Session says it is not a sub-agent", async () => {
    const tui = await open();
    await tui.submit("@say Top level.");
    await tui.waitFor(/Top level\.[\s\S]*test\/scripted · \d/);
    await tui.submit("/back");
    await tui.waitFor(/\/back: this Session is not a sub-agent/);
  });
});

describe("compaction", () => {
  it("Ctrl+X C compacts the Session context", async () => {
    const h = harness();
    const tui = await open();
    await tui.submit("@say Something to compact.");
    await tui.waitFor(/Something to compact\.[\s\S]*test\/scripted · \d/);
    await tui.press(KEY.ctrlX, "c");
    await tui.waitFor(/compaction requested/);
    const { compactions } = await unwrap(sdk.listSessionCompactions({ client: h.api.client, path: { server: "local", sessionId: tui.controller.sessionId! } }));
    expect(compactions.length).toBe(1);
  });
});

describe("reconnecting", () => {
  it("a long outage shows Reconnecting with its error above the composer until the stream catches up", async () => {
    const h = harness();
    const sessionId = await h.createSession();
    await h.finish(sessionId, await h.submit(sessionId, "@say Before the outage."));
    // The in-process fetch behind a switch: down, every request fails and open streams are cut.
    let down = false;
    const open = new Set<ReadableStreamDefaultController<Uint8Array>>();
    const fetch = async (request: Request): Promise<Response> => {
      if (down) throw new TypeError("fetch failed: the test network is down");
      const response = await h.harness.fetch(request);
      if (!response.headers.get("content-type")?.includes("text/event-stream") || !response.body) return response;
      const reader = response.body.getReader();
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({
        start: (c) => void ((controller = c), open.add(c)),
        pull: async (c) => {
          const { done, value } = await reader.read();
          if (done) (c.close(), open.delete(controller));
          else c.enqueue(value);
        },
        cancel: () => void (reader.cancel(), open.delete(controller)),
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const controller = createController(
      { client: createZeClient({ baseUrl: "http://localhost", fetch }), server: "local", where: { directory: h.home.root, local: true } },
      new Preferences(`${h.home.env["XDG_DATA_HOME"]}/ze-harness`),
    );
    await controller.openSession(sessionId);
    const instance = render(createElement(App, { controller }));
    const waiters = new Set<() => void>();
    const write = instance.stdout.write;
    instance.stdout.write = (frame: string) => (write(frame), waiters.forEach((waiter) => waiter()));
    const waitFor = (pattern: RegExp) =>
      new Promise<string>((resolve) => {
        const check = (): void => {
          const frame = instance.lastFrame() ?? "";
          if (pattern.test(frame)) (waiters.delete(check), resolve(frame));
        };
        waiters.add(check);
        check();
      });
    try {
      await waitFor(/Before the outage\./);
      down = true;
      for (const stream of [...open]) stream.error(new TypeError("terminated"));
      const outage = await waitFor(/Reconnecting/);
      expect(outage).toMatch(/Reconnecting: .*(fetch failed|terminated)/);
      down = false;
      await h.finish(sessionId, await h.submit(sessionId, "@say After the outage."));
      const back = await waitFor(/After the outage\.[\s\S]*test\/scripted · \d/);
      expect(back).not.toContain("Reconnecting");
    } finally {
      controller.close();
      instance.unmount();
    }
  });
});
