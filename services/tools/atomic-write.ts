// Replacing a file's whole content atomically: the new content goes to a temporary file in the
// same directory, which then takes the file's name in one rename. A reader (a `cat` in the same
// model step, an editor, the workspace scan) sees the old content or the new one, never a
// truncated file. An existing file keeps its permission bits; a hard link to it keeps the old
// content (as with every editor that saves this way).
import { randomBytes } from "node:crypto";
import { chmod, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export async function writeFileAtomic(path: string, content: string): Promise<void> {
  let mode: number | undefined;
  try {
    mode = (await stat(path)).mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.ze-tmp`);
  try {
    await writeFile(temporary, content, { encoding: "utf8", flag: "wx" });
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
