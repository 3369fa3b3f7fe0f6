// bwrap's command line as a pure function of the plan: the mount order decides what a command
// sees where paths nest (a hidden directory inside the workdir, a workdir inside a hidden
// directory or under the private /tmp), so it is pinned here without running anything.
import { describe, expect, it } from "vitest";
import { bwrapArguments, type BwrapPlan } from "../../services/sandbox/bwrap.js";
import { hostAllowed, resolveSandboxPolicy } from "../../services/sandbox/policy.js";

const plan = (fields: Partial<BwrapPlan>): BwrapPlan => ({ mode: "workspace-write", cwd: "/home/u", privateTemps: ["/tmp"], protectedPaths: [], hidden: [], emptyFile: "/run/e", shareNetwork: false, ...fields });
/** The mount arguments only (after --proc /proc, before --chdir), as [flag, …paths] groups. */
function mounts(args: string[]): string[] {
  return args.slice(args.indexOf("/proc") + 1, args.indexOf("--chdir")).join(" ").split(/ (?=--)/);
}

describe("bwrapArguments", () => {
  it("mounts parents before children: the home workdir, then ~/.ssh hidden inside it", () => {
    const args = bwrapArguments(plan({ hidden: [{ path: "/home/u/.ssh", kind: "directory" }, { path: "/home/u/.netrc", kind: "file" }] }), ["/bin/sh", "-c", "true"]);
    expect(mounts(args)).toEqual(["--tmpfs /tmp", "--bind /home/u /home/u", "--tmpfs /home/u/.ssh", "--ro-bind /run/e /home/u/.netrc"]);
    expect(args.slice(-4)).toEqual(["--", "/bin/sh", "-c", "true"]);
    expect(args).toContain("--unshare-net");
    expect(args).not.toContain("--new-session");
  });

  it("a workdir inside a hidden directory or under the private /tmp stays visible (it is mounted after)", () => {
    expect(mounts(bwrapArguments(plan({ cwd: "/srv/state/work", hidden: [{ path: "/srv/state", kind: "directory" }] }), ["true"]))).toEqual(["--tmpfs /tmp", "--tmpfs /srv/state", "--bind /srv/state/work /srv/state/work"]);
    // Under the private /tmp a hidden parent needs no mount of its own.
    expect(mounts(bwrapArguments(plan({ cwd: "/tmp/x/work", hidden: [{ path: "/tmp/x", kind: "directory" }] }), ["true"]))).toEqual(["--tmpfs /tmp", "--bind /tmp/x/work /tmp/x/work"]);
    expect(mounts(bwrapArguments(plan({ mode: "read-only", cwd: "/tmp/x/work" }), ["true"]))).toEqual(["--tmpfs /tmp", "--ro-bind /tmp/x/work /tmp/x/work"]);
  });

  it("skips what an empty tmpfs already hides, and protects only paths inside the writable workdir", () => {
    const args = bwrapArguments(
      plan({
        hidden: [{ path: "/tmp/state", kind: "directory" }, { path: "/home/u/.local/share/ze", kind: "directory" }, { path: "/home/u/.local/share/ze/auth.json", kind: "file" }],
        protectedPaths: ["/home/u/ze-harness.config.json", "/elsewhere/.git/hooks"],
      }),
      ["true"],
    );
    expect(mounts(args)).toEqual(["--tmpfs /tmp", "--bind /home/u /home/u", "--ro-bind /home/u/ze-harness.config.json /home/u/ze-harness.config.json", "--tmpfs /home/u/.local/share/ze"]);
  });

  it("keeps the host's network only for network: true", () => {
    expect(bwrapArguments(plan({ shareNetwork: true }), ["true"])).not.toContain("--unshare-net");
  });
});

describe("the policy", () => {
  it("the flag overrides the config's mode, off turns it off, the network comes from the config", () => {
    expect(resolveSandboxPolicy(undefined)).toBeUndefined();
    expect(resolveSandboxPolicy({ mode: "workspace-write" }, "off")).toBeUndefined();
    expect(resolveSandboxPolicy({ mode: "off", network: true }, "read-only")).toEqual({ mode: "read-only", network: { kind: "host" } });
    expect(resolveSandboxPolicy({ mode: "workspace-write", network: ["B.example.", "a.example", "a.example"] })).toEqual({ mode: "workspace-write", network: { kind: "hosts", hosts: ["a.example", "b.example"] } });
    expect(resolveSandboxPolicy({ mode: "workspace-write", network: [] })).toEqual({ mode: "workspace-write", network: { kind: "none" } });
  });

  it("matches host names exactly, *.domain below the domain only", () => {
    const allowed = ["example.com", "*.npmjs.org", "127.0.0.1", "::1"];
    expect(["example.com", "EXAMPLE.com.", "registry.npmjs.org", "a.b.npmjs.org", "127.0.0.1", "[::1]"].map((host) => hostAllowed(allowed, host))).toEqual([true, true, true, true, true, true]);
    expect(["www.example.com", "npmjs.org", "evilnpmjs.org", "localhost", "127.0.0.2", ""].map((host) => hostAllowed(allowed, host))).toEqual([false, false, false, false, false, false]);
  });
});
