// `Git` Session plugin sources, without a `git` binary: isomorphic-git clones the repository
// over smart HTTP(S) into a private temporary directory (every branch and tag), the source's
// `ref` — a full 40-hex commit, a branch or a tag; the default branch when absent — is resolved
// to an exact commit there, and that commit's tree is checked out into the artifact cache (no
// `.git`, nothing run: no hooks, no install scripts). A later load of the recorded commit uses
// the cached checkout, or clones again and checks out exactly that commit. The repository root's
// package.json names the entry point, like a package's; the plugin must be self-contained.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { lstat, mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import git from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { unavailable, validationFailure } from "../contract/failure.js";
import type { ArtifactCache } from "./artifact-cache.js";
import { isRecord } from "./checks.js";
import { unbundledDependencies } from "./npm-source.js";

export interface GitOptions {
  /** Bounds the clone and the resolution of the ref (default unlimited). */
  readonly resolveTimeoutMs?: number | undefined;
  /** Bounds the checkout into the cache (default unlimited). */
  readonly installTimeoutMs?: number | undefined;
}

const COMMIT = /^[0-9a-f]{40}$/;

/** The cache key of a commit of a repository. */
export const gitCacheKey = (url: string, commit: string): string => `${createHash("sha256").update(url).digest("hex").slice(0, 16)}-${commit}`;

/** An http(s) repository URL without credentials (they stay in the host's own configuration). */
export function checkGitUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw validationFailure(`Git plugin source ${JSON.stringify(text)} is not a URL.`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw validationFailure(`Git plugin source ${JSON.stringify(text)} must be an http(s) URL (this host speaks smart HTTP only).`);
  if (url.username !== "" || url.password !== "") throw validationFailure("Git plugin source URLs must not carry credentials.");
  return url.href;
}

function bounded<T>(work: Promise<T>, timeoutMs: number | undefined, message: string): Promise<T> {
  if (timeoutMs === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(unavailable(message)), timeoutMs);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A clone of `url` in a temporary directory; `use` runs on it, then it is removed. */
async function withClone<T>(url: string, options: GitOptions, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "ze-harness-git-"));
  try {
    const clone = git.clone({ fs, http, dir, url, noCheckout: true, singleBranch: false, noTags: false }).catch((error: unknown) => {
      const code = (error as { code?: string }).code;
      if (code === "HttpError") throw validationFailure(`The Git repository ${url} could not be cloned: ${(error as Error).message}`);
      throw unavailable(`The Git repository ${url} cannot be reached: ${error instanceof Error ? error.message : String(error)}`);
    });
    await bounded(clone, options.resolveTimeoutMs, `Cloning ${url} did not finish within ${options.resolveTimeoutMs} ms.`);
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The commit `ref` names in the clone at `dir` (a 40-hex commit must exist in it). */
async function commitOf(dir: string, url: string, ref: string | undefined): Promise<string> {
  if (ref !== undefined && COMMIT.test(ref)) {
    const found = await git.readCommit({ fs, dir, oid: ref }).catch(() => undefined);
    if (!found) throw validationFailure(`The Git repository ${url} has no commit ${ref}.`);
    return ref;
  }
  const candidates = ref === undefined ? ["HEAD"] : [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`];
  for (const candidate of candidates) {
    const oid = await git.resolveRef({ fs, dir, ref: candidate }).catch(() => undefined);
    if (oid === undefined) continue;
    // An annotated tag names a tag object: follow it to its commit.
    const commit = await git.readCommit({ fs, dir, oid }).catch(async () => (await git.readTag({ fs, dir, oid }).catch(() => undefined))?.tag.object);
    if (typeof commit === "string") return commit;
    if (commit) return commit.oid;
  }
  throw validationFailure(ref === undefined ? `The Git repository ${url} has no default branch.` : `The Git repository ${url} has no branch, tag or full commit ${JSON.stringify(ref)}.`);
}

/** Checks out `commit` of the clone at `from` into `into` (files only), within the cache's bounds. */
async function checkoutInto(from: string, commit: string, into: string, cache: ArtifactCache): Promise<void> {
  const gitdir = join(from, ".git");
  await git.checkout({ fs, dir: into, gitdir, ref: commit, force: true, noUpdateHead: true });
  let files = 0;
  let bytes = 0;
  const walk = async (directory: string): Promise<void> => {
    for (const name of await readdir(directory)) {
      const path = join(directory, name);
      const info = await lstat(path);
      if (info.isDirectory()) await walk(path);
      else {
        files += 1;
        bytes += info.size;
      }
    }
  };
  await walk(into);
  if (files > cache.bounds.maxFiles || bytes > cache.bounds.maxUnpackedBytes) {
    throw validationFailure(`Commit ${commit} checks out more than ${cache.bounds.maxFiles} files or ${cache.bounds.maxUnpackedBytes} bytes.`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(await readFile(join(into, "package.json"), "utf8"));
  } catch {
    throw validationFailure(`Commit ${commit} has no readable package.json at the repository root to name the plugin's entry point.`);
  }
  const missing = isRecord(manifest) ? unbundledDependencies(manifest) : [];
  if (missing.length > 0) throw validationFailure(`The plugin at commit ${commit} depends on ${missing.join(", ")}; Git plugins are installed without dependencies, so commit them bundled.`);
}

/** Resolves the source to an exact commit and installs its checkout in the cache. */
export async function resolveGitSource(url: string, ref: string | undefined, cache: ArtifactCache, options: GitOptions): Promise<{ commit: string; directory: string }> {
  const href = checkGitUrl(url);
  return withClone(href, options, async (dir) => {
    const commit = await commitOf(dir, href, ref);
    const directory = await installFrom(dir, href, commit, cache, options);
    return { commit, directory };
  });
}

/** The cached checkout of `commit`, cloning and checking it out again when it was freed. */
export async function installGitCommit(url: string, commit: string, cache: ArtifactCache, options: GitOptions): Promise<string> {
  const href = checkGitUrl(url);
  if (!COMMIT.test(commit)) throw validationFailure(`${JSON.stringify(commit)} is not a full commit id.`);
  if (await cache.has("git", gitCacheKey(href, commit))) return cache.path("git", gitCacheKey(href, commit));
  return withClone(href, options, async (dir) => installFrom(dir, href, await commitOf(dir, href, commit), cache, options));
}

function installFrom(clone: string, url: string, commit: string, cache: ArtifactCache, options: GitOptions): Promise<string> {
  const work = cache.ensure("git", gitCacheKey(url, commit), (directory) => checkoutInto(clone, commit, directory, cache));
  return bounded(work, options.installTimeoutMs, `Checking out ${url} at ${commit} did not finish within ${options.installTimeoutMs} ms.`);
}
