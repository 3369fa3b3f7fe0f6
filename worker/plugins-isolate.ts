// The main module of every `Bundle` plugin's Dynamic Worker (worker/plugins-loader.ts loads it
// beside the bundle, as `plugin.js`). It is plain JavaScript, kept here as text: the isolate gets
// only these two modules.
//
// The isolate is stateless across calls (the reference: "setup may run more than once for one
// activation, in different isolates"), so every RPC method runs the plugin's `setup` again on a
// recording context and then does its one thing: `describe` (what setup registered, as plain
// data), `permissions` and `execute` of one tool, one `hook` handler, or `cleanup`. A call whose
// setup registers other contributions than `describe` saw fails closed (`fingerprint`).
// Capabilities cross back to the server object through the `caps` RPC target (workspace files,
// webFetch);
// a tool's `reportActivity`, `askQuestion` and `reportJournal` through the `bridge` target.
// What a Worker plugin cannot register (MCP servers, models, journal kinds, event subscribers,
// Skill sources and transforms, `availableForModel`) fails setup explicitly. Failures return as
// `{ ok: false, error: { name, message, publicMessage?, code?, tag? } }`: a thrown value's own
// properties do not survive RPC.
export const PLUGIN_ISOLATE_MAIN = String.raw`
import { WorkerEntrypoint } from "cloudflare:workers";
import * as loaded from "./plugin.js";

const plugin = loaded.default;

class Unsupported extends Error {}

const unsupported = (what) => () => {
  const error = new Unsupported(what + " cannot be registered by a plugin on the Cloudflare Worker host");
  error.publicMessage = error.message;
  throw error;
};

function failure(error) {
  const e = error ?? {};
  return {
    ok: false,
    error: {
      name: typeof e.name === "string" ? e.name : "Error",
      message: typeof e.message === "string" ? e.message : String(error),
      ...(typeof e.publicMessage === "string" ? { publicMessage: e.publicMessage } : {}),
      ...(typeof e.code === "string" ? { code: e.code } : {}),
      ...(typeof e._tag === "string" ? { tag: e._tag } : {}),
    },
  };
}

function withoutSignal(input) {
  if (input === null || typeof input !== "object") return input;
  const { signal: _signal, onOutput: _onOutput, ...rest } = input;
  return rest;
}

function workspaceFiles(caps) {
  const call = async (method, input) => {
    const answer = await caps.files(method, withoutSignal(input));
    if (answer.ok) return answer.value;
    const error = new Error("Workspace file failed: " + answer.code);
    error.name = "WorkspaceFileError";
    error._tag = "WorkspaceFileError";
    error.code = answer.code;
    throw error;
  };
  return {
    resolvePath: (input) => call("resolvePath", input),
    readText: (input) => call("readText", input),
    writeText: (input) => call("writeText", input),
    removeFile: (input) => call("removeFile", input),
    readDirectory: (input) => call("readDirectory", input),
  };
}

const workspaceShell = {
  execute: async () => {
    const error = new Error("Workspace shell failed: spawn_failed");
    error.name = "WorkspaceShellError";
    error._tag = "WorkspaceShellError";
    error.code = "spawn_failed";
    throw error;
  },
};

function webFetch(caps) {
  return {
    fetchText: async (input) => {
      const answer = await caps.webFetch(withoutSignal(input));
      if (answer.ok) return answer.value;
      const error = new Error("Web fetch failed: " + answer.code);
      error.name = "WebFetchError";
      error._tag = "WebFetchError";
      error.code = answer.code;
      throw error;
    },
  };
}

async function setUp(activation, options, caps) {
  if (plugin === null || typeof plugin !== "object" || typeof plugin.setup !== "function") {
    const error = new Error("The bundle's default export is not a plugin (an object with id and setup).");
    error.publicMessage = error.message;
    throw error;
  }
  const found = { tools: [], hooks: [], skills: [], agents: [], defaults: [] };
  const context = {
    activation,
    options,
    fetch: (...args) => fetch(...args),
    workspaceFiles: workspaceFiles(caps),
    workspaceShell,
    webFetch: webFetch(caps),
    tools: {
      register: (declaration) => {
        if (declaration && declaration.availableForModel !== undefined) unsupported("A tool's availableForModel filter")();
        found.tools.push(declaration);
      },
    },
    agents: { register: (declaration) => found.agents.push(declaration), setDefault: (id) => found.defaults.push(id) },
    skills: { register: (declaration) => found.skills.push(declaration), registerSource: unsupported("Skill sources"), registerTransform: unsupported("Skill transforms") },
    mcp: { register: unsupported("MCP servers") },
    models: { register: unsupported("Model providers") },
    journal: { registerKind: unsupported("Journal kinds") },
    hooks: { register: (name, handler) => found.hooks.push({ name, handler }) },
    events: { subscribe: unsupported("Event subscribers") },
  };
  const cleanup = await plugin.setup(context);
  return { found, cleanup: typeof cleanup === "function" ? cleanup : undefined, id: plugin.id };
}

const fingerprintOf = (found) => JSON.stringify([found.tools.map((tool) => tool && tool.id), found.hooks.map((hook) => hook.name)]);

async function again(activation, options, caps, fingerprint) {
  const set = await setUp(activation, options, caps);
  if (fingerprintOf(set.found) !== fingerprint) {
    const error = new Error("The plugin's setup registered other contributions than at activation: its setup must be deterministic for the same options.");
    error.publicMessage = error.message;
    throw error;
  }
  return set;
}

const plainTool = (tool) => ({
  id: tool.id,
  description: tool.description,
  inputSchema: tool.inputSchema,
  permissions: typeof tool.permissions === "function",
  ...(tool.discoversWorkspaceInstructions === true ? { discoversWorkspaceInstructions: true } : {}),
  ...(tool.directOnly === true ? { directOnly: true } : {}),
});

export class BundlePlugin extends WorkerEntrypoint {
  async id() {
    return plugin !== null && typeof plugin === "object" ? plugin.id : undefined;
  }

  async describe(activation, options, caps) {
    try {
      const { found, cleanup, id } = await setUp(activation, options, caps);
      return {
        ok: true,
        value: {
          id,
          fingerprint: fingerprintOf(found),
          tools: found.tools.map(plainTool),
          hooks: found.hooks.map((hook) => hook.name),
          skills: found.skills,
          agents: found.agents,
          defaults: found.defaults,
          cleanup: cleanup !== undefined,
        },
      };
    } catch (error) {
      return failure(error);
    }
  }

  async permissions(activation, options, caps, fingerprint, toolId, input, context) {
    try {
      const { found } = await again(activation, options, caps, fingerprint);
      const tool = found.tools.find((candidate) => candidate.id === toolId);
      return { ok: true, value: await tool.permissions(input, { ...context, signal: new AbortController().signal }) };
    } catch (error) {
      return failure(error);
    }
  }

  async execute(activation, options, caps, fingerprint, toolId, input, context, bridge) {
    try {
      const { found } = await again(activation, options, caps, fingerprint);
      const tool = found.tools.find((candidate) => candidate.id === toolId);
      // The Turn's signal, bridged: the host answers true when it aborts, false once the call is over.
      const controller = new AbortController();
      bridge.waitForAbort().then((aborted) => {
        if (aborted) controller.abort(new Error("The Turn stopped."));
      }, () => {});
      const value = await tool.execute(input, {
        ...context,
        signal: controller.signal,
        reportActivity: (activity) => bridge.reportActivity(activity),
        askQuestion: (questions) => bridge.askQuestion(questions),
        reportJournal: (entry) => bridge.reportJournal(entry),
      });
      return { ok: true, value };
    } catch (error) {
      return failure(error);
    }
  }

  async hook(activation, options, caps, fingerprint, index, input) {
    try {
      const { found } = await again(activation, options, caps, fingerprint);
      const value = await found.hooks[index].handler(input);
      return { ok: true, value: value === undefined ? null : value };
    } catch (error) {
      return failure(error);
    }
  }

  async cleanup(activation, options, caps, fingerprint) {
    try {
      const { cleanup } = await again(activation, options, caps, fingerprint);
      if (cleanup !== undefined) await cleanup();
      return { ok: true, value: null };
    } catch (error) {
      return failure(error);
    }
  }
}

export default { fetch: () => new Response("A plugin isolate answers RPC only.", { status: 404 }) };
`;
