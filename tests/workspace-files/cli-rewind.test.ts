// `turn rewind` through the built binary against a real `serve` whose Turns run the real
// `write` tool for the scripted test model: the rewind restores the files, --files-only keeps
// the conversation, and a hand edit since is refused naming the file.
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sdk, unwrap, watchTurn, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, succeeded, type CliOptions, type CliResult } from "../support/cli.js";
import { networkClient, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { unb64 } from "./repos.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const token = "cli-rewind-token";
const server = "local";
let model: TestModel;
let home: TempHome;
let options: CliOptions;
let serve: ServeProcess;
let api: ZeClient;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  home = tempHome("ze-cli-rewind-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  options = { env: home.env, cwd: home.root };
  serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
  api = networkClient(serve.url, token);
});
afterAll(async () => {
  await serve?.stop();
  await model?.close();
  home?.cleanup();
});

const remote = (args: readonly string[]): Promise<CliResult> => runCli([...args, "--remote", serve.url, "--token", token], options);

async function writeTurn(sessionId: string, filePath: string, content: string): Promise<string> {
  model.enqueue({ events: [{ type: "tool_call", name: "write", arguments: { filePath, content } }] }, { events: [{ type: "text", text: "written" }] });
  const turnId = randomUUID();
  await unwrap(sdk.submitPrompt({ client: api.client, path: { server, sessionId }, headers: { "x-ze-harness-client-id": "test" }, body: { delivery: "queue", turnId, prompt: [{ type: "text", text: `write ${filePath}` }] } }));
  const turn = await watchTurn(api, { server, sessionId, turnId });
  expect(turn.phase).toBe("completed");
  return turnId;
}

describe("turn rewind", () => {
  it("restores the files, keeps the conversation with --files-only, refuses hand edits", async () => {
    const sessionId = randomUUID();
    await unwrap(sdk.createSession({ client: api.client, path: { server, sessionId }, body: {} }));
    writeFileSync(join(home.root, "notes.md"), "before\n");
    const first = await writeTurn(sessionId, "notes.md", "after one\n");
    const second = await writeTurn(sessionId, "extra.md", "two\n");

    const onlyFiles = await succeeded<{ turnIds: string[]; restored: { bytesBase64: string }[]; visibility?: unknown }>(remote(["turn", "rewind", sessionId, second, "--files-only"]));
    expect(onlyFiles.turnIds).toEqual([second]);
    expect(onlyFiles.restored.map((path) => unb64(path.bytesBase64))).toEqual(["extra.md"]);
    expect(onlyFiles.visibility).toBeUndefined();
    expect(existsSync(join(home.root, "extra.md"))).toBe(false);

    writeFileSync(join(home.root, "notes.md"), "edited by hand\n");
    const refused = await remote(["turn", "rewind", sessionId, first]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: RewindConflictError: .*notes\.md/m);
    expect(readFileSync(join(home.root, "notes.md"), "utf8")).toBe("edited by hand\n");

    writeFileSync(join(home.root, "notes.md"), "after one\n");
    const rewound = await succeeded<{ turnIds: string[]; visibility: { excludedTurnIds: string[] } }>(remote(["turn", "rewind", sessionId, first]));
    expect(rewound.turnIds).toEqual([first]);
    expect(rewound.visibility.excludedTurnIds).toEqual([first]);
    expect(readFileSync(join(home.root, "notes.md"), "utf8")).toBe("before\n");

    const usage = await remote(["turn", "rewind", sessionId, "not-a-uuid"]);
    expect(usage.code).toBe(2);
    const unknown = await remote(["turn", "rewind", sessionId, randomUUID()]);
    expect(unknown.stderr).toMatch(/^error: NotFoundError: /m);
  });
});
