// THIRD_PARTY_LICENSES.txt of the release archive: the licences of every production dependency
// (generate-license-file, which reads the installed tree and leaves dev dependencies out), then
// Node.js's own notice, since the executable is the Node.js runtime. The notice is the build
// runtime's LICENSE file (found beside its binary or where distributions put its documentation),
// never fetched: the build works offline.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { getLicenseFileText } from "generate-license-file";

/** The running Node's LICENSE file: its install prefix (official archives) or a distribution's doc folder. */
export function nodeLicensePath() {
  const prefix = dirname(dirname(process.execPath));
  const candidates = [join(prefix, "LICENSE"), join(prefix, "share", "doc", "node", "LICENSE"), join(prefix, "share", "doc", "nodejs", "LICENSE"), "/usr/share/doc/nodejs/LICENSE"];
  const found = candidates.find((path) => existsSync(path));
  if (found === undefined) throw new Error(`the Node.js LICENSE of this runtime was not found (looked in ${candidates.join(", ")})`);
  return found;
}

export async function writeLicenses(root, output) {
  const dependencies = await getLicenseFileText(join(root, "package.json"), { lineEnding: "lf" });
  const node = readFileSync(nodeLicensePath(), "utf8");
  const heading = `Node.js ${process.version} (the runtime inside the ze-harness executable)`;
  writeFileSync(output, `${dependencies.trimEnd()}\n\n${"-".repeat(80)}\n\n${heading}\n\n${node.trimEnd()}\n`);
}
