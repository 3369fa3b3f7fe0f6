// A real swapper process (fixtures/swapper.mjs) for the workdir race tests: `dir` becomes a
// symlink to `target` and back in a tight loop while a test runs an operation against paths
// through it. `stop()` ends it with `dir` the real directory again and resolves with the number
// of swaps it made.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("./fixtures/swapper.mjs", import.meta.url));

export interface Swapper {
  stop(): Promise<number>;
}

export async function startSwapper(dir: string, target: string): Promise<Swapper> {
  const child = spawn(process.execPath, [script, dir, target], { stdio: ["pipe", "pipe", "inherit"] });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      output += chunk;
      if (output.includes("ready\n")) resolve();
    });
    void exited.then((code) => reject(new Error(`the swapper exited (${code}) before it was ready`)));
  });
  return {
    async stop() {
      child.stdin.end();
      const code = await exited;
      const swaps = /swaps (\d+)/.exec(output);
      if (code !== 0 || !swaps) throw new Error(`the swapper failed (${code}): ${output}`);
      return Number(swaps[1]);
    },
  };
}
