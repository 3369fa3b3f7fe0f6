// `run` through the built binary: embedded (the CLI process runs the Turn) and --remote against
// a `serve` process, both reaching the scripted test model that runs in this test process.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Turn } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runCli, scriptByPrompt, startCli, type CliOptions } from "../support/cli.js";
import { binPath, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { ONE_PIXEL_PNG as PNG } from "../support/png.js";

// Every test spawns node processes; leave room on a loaded two-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let model: TestModel;
let script: ReturnType<typeof scriptByPrompt>;
let home: TempHome;
let options: CliOptions;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  script = scriptByPrompt(model);
  home = tempHome("ze-cli-run-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

type ChatMessage = { role: string; content: unknown };
const messagesOf = (index: number): ChatMessage[] => (model.requests[index]!.body as { messages: ChatMessage[] }).messages;
const lastUserContent = (index: number): unknown => messagesOf(index).filter((message) => message.role === "user").at(-1)!.content;

// A 1×1 PNG and the first bytes of a JPEG (the type is told by magic bytes, not the name).
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

describe("run (embedded)", () => {
  it("prints the streamed answer and exits 0", async () => {
    const before = model.requests.length;
    script("Say hello", { events: [{ type: "text", text: "Hello from the model." }] });
    const result = await runCli(["--embedded", "run", "Say hello"], options);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Hello from the model.\n" });
    expect(JSON.stringify(lastUserContent(before))).toContain("Say hello");
  });

  it("writes the text as it arrives, before the Turn finishes", async () => {
    script("Stream please", { events: [{ type: "text", text: "First part." }, { type: "delay", ms: 3000 }, { type: "text", text: " Second part." }] });
    const cli = startCli(["--embedded", "run", "Stream please"], options);
    await cli.waitFor(/First part\./);
    expect(cli.stdout()).not.toContain("Second part.");
    cli.end();
    const result = await cli.exited;
    expect(result).toMatchObject({ code: 0, stdout: "First part. Second part.\n" });
  });

  it("a tool round: the model writes a file in the cwd, then answers", async () => {
    const cwd = join(home.root, "tool-round");
    mkdirSync(cwd);
    script("Write notes.txt",
      { events: [{ type: "text", text: "Writing it." }, { type: "tool_call", name: "write", arguments: { filePath: "notes.txt", content: "written by the model\n" } }] },
      { events: [{ type: "text", text: "Done." }] },
    );
    const result = await runCli(["--embedded", "run", "Write notes.txt"], { ...options, cwd });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe("Writing it.\nDone.\n");
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("written by the model\n");
  });

  it("a failed Turn exits 1 with one stderr line naming the outcome and the fault", async () => {
    script("This will fail", { error: { status: 400 } });
    const result = await runCli(["--embedded", "run", "This will fail"], options);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^error: Turn failed: provider_bad_request: [^\n]*HTTP 400[^\n]*\n$/);
  });

  it("--json prints the final Turn (phase completed) instead of streaming; --system-prompt and --model reach the model", async () => {
    const before = model.requests.length;
    script("Reply as JSON please", { events: [{ type: "text", text: "As JSON." }] });
    const result = await runCli(["--embedded", "run", "--json", "--system-prompt", "Answer briefly.", "--model", TEST_MODEL, "Reply as JSON please"], options);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const turn = jsonOf<Turn>(result);
    expect(turn).toMatchObject({ phase: "completed", model: TEST_MODEL, outcome: { kind: "completed", text: "As JSON." } });
    expect(turn.parts).toEqual([expect.objectContaining({ type: "text", text: "As JSON." })]);
    expect(JSON.stringify(messagesOf(before).filter((message) => message.role === "system"))).toContain("Answer briefly.");
  });

  it("--session continues an existing Session: the model sees the earlier exchange", async () => {
    script("First question", { events: [{ type: "text", text: "The first answer." }] });
    const first = jsonOf<Turn>(await runCli(["--embedded", "run", "--json", "First question"], options));
    script("Second question", { events: [{ type: "text", text: "The second answer." }] });
    const before = model.requests.length;
    const second = await runCli(["--embedded", "run", "--session", first.sessionId, "--json", "Second question"], options);
    expect(second).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf<Turn>(second)).toMatchObject({ sessionId: first.sessionId, sequence: 2 });
    const transcript = JSON.stringify(messagesOf(before));
    expect(transcript).toContain("First question");
    expect(transcript).toContain("The first answer.");
    expect(transcript).toContain("Second question");
  });

  it("images (--image, --image-base64, --image-file by magic bytes) are sent after the text, in order", async () => {
    writeFileSync(join(home.root, "pixel.png"), PNG);
    writeFileSync(join(home.root, "photo"), JPEG);
    const before = model.requests.length;
    script("Describe these", { events: [{ type: "text", text: "Nice pictures." }] });
    const result = await runCli(
      [
        "--embedded",
        "run",
        "Describe these",
        "--image-file",
        "pixel.png",
        "--image",
        "https://example.com/a.webp",
        "--image-base64",
        `image/gif:R0lGODlhAQABAAAAACw=`,
        "--image-file",
        "photo",
      ],
      options,
    );
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Nice pictures.\n" });
    expect(lastUserContent(before)).toEqual([
      { type: "text", text: "Describe these" },
      { type: "image_url", image_url: { url: "https://example.com/a.webp" } },
      { type: "image_url", image_url: { url: "data:image/gif;base64,R0lGODlhAQABAAAAACw=" } },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG.toString("base64")}` } },
      { type: "image_url", image_url: { url: `data:image/jpeg;base64,${JPEG.toString("base64")}` } },
    ]);
  });

  it("an image file of another type, or a malformed --image-base64, is a usage error (exit 2)", async () => {
    writeFileSync(join(home.root, "notes.txt"), "not an image");
    const wrongType = await runCli(["--embedded", "run", "Look", "--image-file", "notes.txt"], options);
    expect(wrongType).toMatchObject({ code: 2, stdout: "" });
    expect(wrongType.stderr).toMatch(/^error: notes\.txt is not a JPEG, PNG, GIF or WebP image\n$/);
    const malformed = await runCli(["--embedded", "run", "Look", "--image-base64", "image/tiff:AAAA"], options);
    expect(malformed).toMatchObject({ code: 2, stdout: "" });
    expect(malformed.stderr).toMatch(/^error: --image-base64 takes MIME:BASE64/);
    // A file too big to travel in one request body is named, with the limit, before anything is sent.
    const big = join(home.root, "big.png");
    writeFileSync(big, Buffer.concat([PNG, Buffer.alloc(900 * 1024)]));
    const before = model.requests.length;
    const tooBig = await runCli(["--embedded", "run", "Look", "--image-file", "big.png"], options);
    expect(tooBig).toMatchObject({ code: 2, stdout: "" });
    expect(tooBig.stderr).toMatch(/^error: image file big\.png is \d+ bytes \(\d+ as base64\); a request body carries at most 1048576 bytes, so an image file must stay under about \d+ KiB\n$/);
    expect(model.requests.length).toBe(before);
    const missing = await runCli(["--embedded", "run", "Look", "--image-file", "missing.png"], options);
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(missing.stderr).toMatch(/^error: cannot read image file missing\.png: ENOENT\n$/);
  });

  it("without a TTY a permission request is rejected with a reason, reported on stderr, and the Turn fails tool_denied", async () => {
    const outside = join(home.dir, "outside.txt");
    writeFileSync(outside, "secret\n");
    script("Read the outside file", { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] });
    const result = await runCli(["--embedded", "run", "--json", "Read the outside file"], options);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^permission rejected \(no interactive terminal\): external_directory \S+\nerror: Turn failed: tool_denied: [^\n]+\n$/);
    const turn = jsonOf<Turn>(result);
    const tool = turn.parts.find((part) => part.type === "tool");
    expect(tool).toMatchObject({
      state: "denied",
      approval: { state: "resolved", decision: "deny", reply: "reject", replyMessage: "no interactive terminal", source: "remote" },
    });
    expect(turn.outcome).toMatchObject({ kind: "failed", fault: { code: "tool_denied" } });
  });

  it("without a TTY a question is dismissed and reported on stderr", async () => {
    script("Ask me a question",
      {
        events: [
          {
            type: "tool_call",
            name: "question",
            arguments: { questions: [{ question: "Which colour?", header: "Colour", options: [{ label: "Red", description: "" }, { label: "Blue", description: "" }] }] },
          },
        ],
      },
      { events: [{ type: "text", text: "No answer, fine." }] },
    );
    const result = await runCli(["--embedded", "run", "Ask me a question"], options);
    expect(result).toMatchObject({ code: 0, stdout: "No answer, fine.\n" });
    expect(result.stderr).toBe("question rejected (no interactive terminal): Colour\n");
  });

  it("Ctrl-C cancels the Turn and exits 130", async () => {
    script("Take your time", { hang: true });
    const before = model.requests.length;
    const cli = startCli(["--embedded", "run", "--json", "Take your time"], options);
    await model.waitForRequest(before + 1);
    cli.child.kill("SIGINT");
    const result = await cli.exited;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/cancelling the Turn/);
    expect(jsonOf<Turn>(result)).toMatchObject({ phase: "cancelled", outcome: { kind: "cancelled", reason: "interrupted" } });
  });

  it("Ctrl-C while the answer streams: the notice goes to stderr on a line of its own, also when stdout and stderr are one pipe", async () => {
    const notice = "cancelling the Turn (Ctrl-C again to quit now)";
    for (const sharedOutput of [false, true]) {
      const marker = `Half an answer ${sharedOutput ? "shared" : "separate"}`;
      script(marker, { events: [{ type: "text", text: `${marker}, and` }, { type: "delay", ms: 60_000 }, { type: "text", text: " never the rest." }] });
      const cli = startCli(["--embedded", "run", marker], { ...options, sharedOutput });
      await cli.waitFor(/, and/);
      cli.child.kill("SIGINT");
      const result = await cli.exited;
      expect(result.code).toBe(130);
      if (sharedOutput) {
        expect(result.stdout).toBe(`${marker}, and\n${notice}\n`);
      } else {
        expect(result.stdout).toBe(`${marker}, and\n`);
        expect(result.stderr).toBe(`${notice}\n`);
      }
    }
  });

  it("a prompt that is not admitted leaves no Session behind (create and submit are one transaction)", async () => {
    const before = jsonOf<{ id: string }[]>(await runCli(["--embedded", "session", "list", "--all"], options));
    const result = await runCli(["--embedded", "run", "--model", "nope/unknown-model", "Leave nothing behind"], options);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: UnavailableError: [^\n]*nope\/unknown-model[^\n]*\n$/);
    expect(jsonOf<{ id: string }[]>(await runCli(["--embedded", "session", "list", "--all"], options))).toEqual(before);
  });
});

// util-linux `script` gives the CLI a pseudo-terminal (stdin, stdout and stderr all on it).
// It ships in Debian's essential bsdutils, so it is always there.
const hasScript = spawnSync("script", ["--version"]).status === 0;

/** Runs the CLI on a terminal, typing each answer once its prompt appears; resolves with the terminal output. */
function inTerminal(args: readonly string[], answers: readonly (readonly [RegExp, string])[]): Promise<{ code: number | null; output: string }> {
  const quote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, binPath, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: home.root, env: home.env, stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  let answered = 0; // output before this offset was already answered
  let next = 0;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    output += chunk;
    const answer = answers[next];
    if (answer && answer[0].test(output.slice(answered))) {
      next += 1;
      answered = output.length;
      child.stdin.write(`${answer[1]}\r`);
    }
  });
  // A prompt that never matches would hang the CLI: end it so the test fails with the output.
  const stop = setTimeout(() => child.kill(), 30_000);
  return new Promise((resolvePromise) => child.on("close", (code) => (clearTimeout(stop), resolvePromise({ code, output }))));
}

describe("run on a terminal", () => {
  it("has util-linux script to provide the terminal", () => {
    expect(hasScript).toBe(true);
  });

  it("asks for a permission on the terminal and replies with the choice", async () => {
    const outside = join(home.dir, "tty-outside.txt");
    writeFileSync(outside, "terminal secret\n");
    script("Read it on the terminal", { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] }, { events: [{ type: "text", text: "It says terminal secret." }] });
    const before = model.requests.length;
    const result = await inTerminal(["--embedded", "run", "Read it on the terminal"], [[/Allow external_directory \S+\? \[o\]nce\/\[a\]lways\/\[r\]eject /, "o"]]);
    expect(result.code).toBe(0);
    expect(result.output).toContain("It says terminal secret.");
    // The tool ran: its output went back to the model.
    expect(JSON.stringify(model.requests[before + 1]!.body)).toContain("terminal secret");
  });

  it("asks a tool's question with numbered options and answers with the chosen label", async () => {
    script("Ask me on the terminal",
      {
        events: [
          {
            type: "tool_call",
            name: "question",
            arguments: { questions: [{ question: "Which colour?", header: "Colour", options: [{ label: "Red", description: "warm" }, { label: "Blue", description: "cool" }] }] },
          },
        ],
      },
      { events: [{ type: "text", text: "Blue, then." }] },
    );
    const before = model.requests.length;
    const result = await inTerminal(["--embedded", "run", "Ask me on the terminal"], [[/Answer \(a number, or your own answer; empty to dismiss\): /, "2"]]);
    expect(result.code).toBe(0);
    expect(result.output).toMatch(/Colour: Which colour\?\r\n  1\) Red — warm\r\n  2\) Blue — cool/);
    expect(result.output).toContain("Blue, then.");
    expect(JSON.stringify(model.requests[before + 1]!.body)).toContain("Blue");
  });
});

describe("run --remote", () => {
  const token = "cli-run-token";
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
  });
  afterAll(async () => {
    await serve?.stop();
  });
  const remote = (args: readonly string[]): string[] => [...args, "--remote", serve.url, "--token", token];

  it("streams the answer through the server, exit 0", async () => {
    script("Greet over HTTP", { events: [{ type: "text", text: "Hello over HTTP." }] });
    const result = await runCli(remote(["run", "Greet over HTTP"]), options);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "Hello over HTTP.\n" });
  });

  it("a tool round writes into the cwd (sent as the Session's clientWorkdir)", async () => {
    const cwd = join(home.root, "remote-round");
    mkdirSync(cwd);
    script("Write remote.txt", { events: [{ type: "tool_call", name: "write", arguments: { filePath: "remote.txt", content: "over HTTP\n" } }] }, { events: [{ type: "text", text: "Written." }] });
    const result = await runCli(remote(["run", "--json", "Write remote.txt"]), { ...options, cwd });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf<Turn>(result)).toMatchObject({ phase: "completed", outcome: { text: "Written." } });
    expect(existsSync(join(cwd, "remote.txt"))).toBe(true);
  });

  it("a failed Turn and a rejected permission request behave as embedded", async () => {
    script("Fail remotely", { error: { status: 400 } });
    const failed = await runCli(remote(["run", "Fail remotely"]), options);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error: Turn failed: provider_bad_request: /);

    const outside = join(home.dir, "outside-remote.txt");
    writeFileSync(outside, "secret\n");
    script("Read it remotely", { events: [{ type: "tool_call", name: "read", arguments: { filePath: outside } }] });
    const denied = await runCli(remote(["run", "Read it remotely"]), options);
    expect(denied).toMatchObject({ code: 1, stdout: "" });
    expect(denied.stderr).toMatch(/^permission rejected \(no interactive terminal\): external_directory [^\n]+\nerror: Turn failed: tool_denied: /);
  });

  it("a prompt that is not admitted leaves no Session behind: the new Session is deleted again", async () => {
    const list = async (): Promise<string[]> => jsonOf<{ id: string }[]>(await runCli(remote(["session", "list", "--all"]), options)).map((session) => session.id);
    const before = await list();
    const result = await runCli(remote(["run", "--model", "nope/unknown-model", "Leave nothing behind remotely"]), options);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: UnavailableError: [^\n]*nope\/unknown-model[^\n]*\n$/);
    expect(await list()).toEqual(before);
  });

  it("an unreachable server is one error line, exit 1", async () => {
    const result = await runCli(["run", "Hi", "--remote", "http://127.0.0.1:9"], options);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(/^error: TransportError: [^\n]+\n$/);
  });
});

describe("run beside other hosts on one database", () => {
  const database = () => join(home.dir, "shared-run.db");

  it("ten parallel embedded runs beside a live serve each run their own Turn exactly once", async () => {
    const served = await startServe(["--database", database()], home.env, home.root);
    try {
      for (let index = 0; index < 10; index++) script(`parallel-${index}-`, { events: [{ type: "text", text: `answer ${index}` }] });
      const before = model.requests.length;
      const results = await Promise.all(Array.from({ length: 10 }, (_, index) => runCli(["--embedded", "run", "--database", database(), `parallel-${index}-`], options)));
      results.forEach((result, index) => expect(result).toMatchObject({ code: 0, stderr: "", stdout: `answer ${index}\n` }));
      const prompts = model.requests.slice(before).map((request) => JSON.stringify(request.body));
      for (let index = 0; index < 10; index++) expect(prompts.filter((body) => body.includes(`parallel-${index}-`))).toHaveLength(1);
    } finally {
      await served.stop();
    }
  });

  it("an embedded run leaves a stopped serve's queued Turns queued, for the next serve to run", async () => {
    const { networkClient } = await import("../support/harness.js");
    const { sdk, unwrap, watchTurn } = await import("../../clients/index.js");
    const { randomUUID } = await import("node:crypto");
    script("serve-first-", { hang: true });
    script("serve-second-", { events: [{ type: "text", text: "second ran" }] });
    script("serve-third-", { events: [{ type: "text", text: "third ran" }] });
    script("embedded-one-", { events: [{ type: "text", text: "embedded ran" }] });
    const first = await startServe(["--database", database()], home.env, home.root);
    const api = networkClient(first.url);
    const sessionId = randomUUID();
    await unwrap(sdk.createSession({ client: api.client, path: { server: "local", sessionId }, body: {} }));
    const submit = async (text: string): Promise<string> => {
      const turnId = randomUUID();
      await unwrap(sdk.submitPrompt({ client: api.client, path: { server: "local", sessionId }, headers: { "x-ze-harness-client-id": "t" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] } }));
      return turnId;
    };
    // Wait for the first Turn's own model request (its hang), so the stop finds it running.
    const requestsBefore = model.requests.length;
    await submit("serve-first-");
    await model.waitForRequest(requestsBefore + 1);
    const queued = [await submit("serve-second-"), await submit("serve-third-")];
    expect(await first.stop("SIGTERM")).toBe(0);

    const embedded = await runCli(["--embedded", "run", "--database", database(), "embedded-one-"], options);
    expect(embedded).toMatchObject({ code: 0, stdout: "embedded ran\n" });
    const listed = jsonOf<{ turns: { turn: Turn }[] }>(await runCli(["--embedded", "turn", "list", sessionId, "--database", database()], options));
    expect(listed.turns.map(({ turn }) => turn.phase)).toEqual(["failed", "pending", "pending"]);

    const second = await startServe(["--database", database()], home.env, home.root);
    try {
      const again = networkClient(second.url);
      for (const [index, turnId] of queued.entries()) {
        const turn = await watchTurn(again, { server: "local", sessionId, turnId });
        expect(turn.outcome).toMatchObject({ kind: "completed", text: index === 0 ? "second ran" : "third ran" });
      }
    } finally {
      await second.stop();
    }
  });
});
