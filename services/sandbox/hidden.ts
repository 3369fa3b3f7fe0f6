// What a sandboxed command never sees, whatever the mode: the harness's own secrets (the state
// directory with auth.json, daemon-token, server.json and the databases; the global config
// directory; an auth file or database file kept elsewhere — the host passes those in), the usual
// credential stores in the home directory, and the sockets of local services that would run a
// command outside the sandbox (the user's systemd/D-Bus bus, container engines, screen).
// Directories are covered by an empty tmpfs, files by an empty read-only file. Only paths that
// exist are listed (a missing one has nothing to hide, and the rest of the file system is
// read-only, so it cannot be created outside the workdir either), each at its real path.
import { lstatSync, realpathSync, type Stats } from "node:fs";
import { join } from "node:path";

/** Credential directories and files below the home directory (documented in services/sandbox/README.md). */
export const HOME_CREDENTIALS: readonly string[] = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".config/gh",
  ".config/hub",
  ".config/git/credentials",
  ".kube",
  ".docker",
  ".password-store",
  ".local/share/keyrings",
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
  ".pgpass",
  ".vault-token",
  ".terraform.d/credentials.tfrc.json",
];

/** Sockets of local services (and their directories) that accept commands to run outside the sandbox. */
export function serviceSockets(uid: number, runtimeDirectory: string | undefined): string[] {
  return [
    `/run/user/${uid}`,
    ...(runtimeDirectory ? [runtimeDirectory] : []),
    "/run/dbus",
    "/run/docker.sock",
    "/run/docker",
    "/run/containerd",
    "/run/podman",
    "/run/screen",
    "/var/run/docker.sock",
  ];
}

export interface HiddenPath {
  readonly path: string;
  readonly kind: "directory" | "file";
}

function stat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** `paths` that exist, at their real paths (a symlinked dotfile is hidden where it points), without duplicates. */
export function existingHidden(paths: readonly string[]): HiddenPath[] {
  const seen = new Map<string, HiddenPath>();
  for (const path of paths) {
    if (!stat(path)) continue;
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      continue; // a dangling link: nothing behind it to read
    }
    const target = stat(real);
    if (!target) continue;
    seen.set(real, { path: real, kind: target.isDirectory() ? "directory" : "file" });
  }
  return [...seen.values()];
}

/** The home directory's credential paths. */
export const homeCredentials = (home: string): string[] => HOME_CREDENTIALS.map((relative) => join(home, relative));
