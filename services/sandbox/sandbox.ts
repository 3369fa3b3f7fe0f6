// One host's sandbox: its policy, the bubblewrap binary (found and probed once it is first
// needed), a private runtime directory (an empty file to hide files with, the proxy's socket)
// and, for `network: [hosts]`, the filtering proxy. `wrap()` turns a command's argv into the
// bwrap launch that runs it; every caller (the shell tool, terminals, MCP stdio) spawns that
// launch exactly as it spawned the command before, so process groups, PTYs and pipes are theirs.
import { mkdtempSync, realpathSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { bridgedArgv, proxyEnvironment } from "./bridge.js";
import { bwrapArguments, findBwrap, probeBwrap, type BwrapPlan } from "./bwrap.js";
import { SandboxUnavailable } from "./errors.js";
import { existingHidden, homeCredentials, serviceSockets } from "./hidden.js";
import type { SandboxPolicy } from "./policy.js";
import { FilteringProxy } from "./proxy.js";

/** What the caller spawns instead of its command. */
export interface SandboxLaunch {
  readonly file: string;
  readonly args: string[];
  /** The command's environment plus the sandbox's (TMPDIR, the proxy variables). */
  readonly env: Record<string, string>;
}

/** The capability the shell tool, terminals and MCP stdio receive. */
export interface CommandSandbox {
  readonly policy: SandboxPolicy;
  /** Resolves once bubblewrap runs here (and the proxy listens); rejects with {@link SandboxUnavailable}. Cheap after the first success. */
  prepare(): Promise<void>;
  /** The launch of `argv` in `cwd` (writable in workspace-write). Call after `prepare()` resolved. */
  wrap(argv: readonly string[], options: { readonly cwd: string; readonly env: Readonly<Record<string, string>> }): SandboxLaunch;
}

/** The sandbox that applies to commands in `workdir`, or undefined where commands run unsandboxed. */
export type SandboxResolver = (workdir: string) => CommandSandbox | undefined;

export interface HostSandboxOptions {
  readonly policy: SandboxPolicy;
  /** The host's environment: PATH and ZE_HARNESS_BWRAP (the binary), TMPDIR, XDG_RUNTIME_DIR. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  /** The harness's own secrets: the state directory, the global config directory, an auth or database file kept elsewhere. */
  readonly secrets: readonly string[];
}

/** Inside the writable workdir these stay read-only when they exist: the project's config, and what git would run later outside the sandbox. */
const PROTECTED_IN_WORKDIR = ["ze-harness.config.json", ".git/hooks", ".git/config"];

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

export class HostSandbox implements CommandSandbox {
  readonly policy: SandboxPolicy;
  readonly #options: HostSandboxOptions;
  #ready: Promise<void> | undefined;
  #bwrap: string | undefined;
  #runtime: string | undefined;
  #proxy: FilteringProxy | undefined;
  #closed = false;

  constructor(options: HostSandboxOptions) {
    this.policy = options.policy;
    this.#options = options;
  }

  prepare(): Promise<void> {
    if (this.#closed) return Promise.reject(new SandboxUnavailable("the host is shutting down"));
    // A failure is not kept: installing bubblewrap later needs no restart.
    this.#ready ??= this.#setUp().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  async #setUp(): Promise<void> {
    if (process.platform !== "linux") throw new SandboxUnavailable(`bubblewrap needs Linux, not ${process.platform}`);
    const found = findBwrap(this.#options.env);
    if ("missing" in found) throw new SandboxUnavailable(found.missing);
    await probeBwrap(found.path, this.policy.network.kind === "host");
    if (!this.#runtime) {
      const runtime = mkdtempSync(join(tmpdir(), "ze-sandbox-"));
      writeFileSync(join(runtime, "empty"), "", { mode: 0o400 });
      this.#runtime = runtime;
    }
    if (this.policy.network.kind === "hosts" && !this.#proxy) {
      try {
        this.#proxy = await FilteringProxy.start(join(this.#runtime, "proxy.sock"), this.policy.network.hosts);
      } catch (error) {
        throw new SandboxUnavailable(`the network proxy could not listen: ${(error as Error).message}`);
      }
    }
    this.#bwrap = found.path;
  }

  wrap(argv: readonly string[], options: { readonly cwd: string; readonly env: Readonly<Record<string, string>> }): SandboxLaunch {
    if (this.#bwrap === undefined || this.#runtime === undefined) throw new SandboxUnavailable("the sandbox was not prepared");
    const cwd = real(options.cwd) ?? options.cwd;
    const env = this.#options.env;
    // The host's TMPDIR and the one the command would have inherited: both become private.
    const temps = ["/tmp", "/var/tmp", ...[env["TMPDIR"], options.env["TMPDIR"]].filter((path): path is string => path !== undefined && isAbsolute(path))];
    const privateTemps = [...new Set(temps.map(real).filter((path): path is string => path !== undefined && path !== "/"))];
    const protectedPaths = this.policy.mode === "workspace-write" ? PROTECTED_IN_WORKDIR.map((relative) => join(cwd, relative)).filter(existsSync).map((path) => real(path) ?? path) : [];
    const hidden = existingHidden([...this.#options.secrets, ...homeCredentials(this.#options.home), ...serviceSockets(process.getuid?.() ?? 0, env["XDG_RUNTIME_DIR"])]);
    const plan: BwrapPlan = {
      mode: this.policy.mode,
      cwd,
      privateTemps,
      protectedPaths,
      hidden,
      emptyFile: join(this.#runtime, "empty"),
      shareNetwork: this.policy.network.kind === "host",
      proxySocket: this.#proxy?.socketPath,
    };
    const command = this.#proxy ? bridgedArgv(process.execPath, argv) : argv;
    return {
      file: this.#bwrap,
      args: bwrapArguments(plan, command),
      env: { ...options.env, TMPDIR: "/tmp", ...(this.#proxy ? proxyEnvironment() : {}) },
    };
  }

  /** Stops the proxy and removes the runtime directory; later commands are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#ready?.catch(() => undefined);
    await this.#proxy?.close();
    this.#proxy = undefined;
    if (this.#runtime) rmSync(this.#runtime, { recursive: true, force: true });
    this.#runtime = undefined;
  }
}
