// The dashboard suites' real parts: a `serve` of the BUILT binary (it serves dist/dashboard.json)
// whose provider is the scripted test model, the generated client over the network beside it,
// and Debian's Chromium driven by playwright-core. Every page records its requests, console
// errors and page errors, so a test can assert that nothing left the host and that the CSP
// let the page's script run.
import { chromium, type Browser, type BrowserContextOptions, type Page, type Request as BrowserRequest } from "playwright-core";
import { randomUUID } from "node:crypto";
import { sdk, unwrap, type ZeClient } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt } from "../support/cli.js";
import { networkClient, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";

export const CHROMIUM = "/usr/bin/chromium";
export const SERVER = "local";

export interface DashboardServer {
  readonly url: string;
  readonly origin: string;
  readonly model: TestModel;
  readonly home: TempHome;
  readonly serve: ServeProcess;
  readonly api: ZeClient;
  createSession(body?: Record<string, unknown>): Promise<string>;
  submit(sessionId: string, text: string): Promise<string>;
  close(): Promise<void>;
}

export async function startDashboardServer(options: { token?: string } = {}): Promise<DashboardServer> {
  assertBuilt();
  const model = await startTestModel();
  const home = tempHome("ze-dashboard-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
  const args = ["--root", home.root, ...(options.token !== undefined ? ["--token", options.token] : [])];
  const serve = await startServe(args, home.env, home.root);
  const api = networkClient(serve.url, options.token);
  return {
    url: serve.url,
    origin: new URL(serve.url).origin,
    model,
    home,
    serve,
    api,
    async createSession(body = {}) {
      const sessionId = randomUUID();
      await unwrap(sdk.createSession({ client: api.client, path: { server: SERVER, sessionId }, body }));
      return sessionId;
    },
    async submit(sessionId, text) {
      const turnId = randomUUID();
      await unwrap(
        sdk.submitPrompt({
          client: api.client,
          path: { server: SERVER, sessionId },
          headers: { "x-ze-harness-client-id": "dashboard-test" },
          body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] },
        }),
      );
      return turnId;
    },
    async close() {
      await serve.stop();
      await model.close();
      home.cleanup();
    },
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM });
}

export interface RecordedPage {
  readonly page: Page;
  readonly requests: BrowserRequest[];
  /** Console errors and uncaught page errors. */
  readonly errors: string[];
  /** Every recorded request's URL that is not on `origin` (empty when the page stayed home). */
  foreign(origin: string): string[];
}

export async function openPage(browser: Browser, options: BrowserContextOptions = {}): Promise<RecordedPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const requests: BrowserRequest[] = [];
  const errors: string[] = [];
  page.on("request", (request) => requests.push(request));
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  return {
    page,
    requests,
    errors,
    foreign: (origin) => requests.map((request) => request.url()).filter((url) => new URL(url).origin !== origin),
  };
}

/** A Deferred, for holding a scripted model answer until the test lets it go. */
export function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
