// One key, no Enter: `run`'s `[o]nce/[a]lways/[r]eject` on a terminal. stdin goes into raw mode
// for the question only and back afterwards; the key is echoed on its line. Ctrl-C calls
// `interrupt` (raw mode turns it into a byte, not SIGINT); Ctrl-D or the end of input is no answer.
export interface KeyOptions {
  /** The accepted keys, lower case; other keys are ignored. */
  readonly keys: readonly string[];
  /** Ctrl-C while waiting. */
  readonly interrupt: () => void;
}

/** Writes `prompt` to stderr and resolves with the first accepted key, or undefined at end of input. */
export function readKey(prompt: string, options: KeyOptions): Promise<string | undefined> {
  const stdin = process.stdin;
  // Raw mode before the prompt shows: a key typed as soon as it appears is neither echoed nor held for Enter.
  const wasRaw = stdin.isRaw;
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    const finish = (key: string | undefined): void => {
      stdin.off("data", onData);
      stdin.off("end", onEnd);
      stdin.setRawMode(wasRaw);
      stdin.pause();
      process.stderr.write(`${key ?? ""}\n`);
      resolve(key);
    };
    const onData = (chunk: Buffer): void => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\x03") options.interrupt();
        else if (char === "\x04") return finish(undefined);
        else if (options.keys.includes(char.toLowerCase())) return finish(char.toLowerCase());
      }
    };
    const onEnd = (): void => finish(undefined);
    stdin.on("data", onData);
    stdin.on("end", onEnd);
    stdin.resume();
  });
}
