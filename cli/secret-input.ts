// Reads a secret (an API key) from the terminal without echoing it: raw mode, one line, nothing
// written back but the prompt and a newline. Backspace edits, Ctrl-C interrupts, Ctrl-D ends.
// The value never goes through arguments, the environment or a pipe.

export class SecretInterrupted extends Error {
  override name = "SecretInterrupted";
}

export function readSecret(prompt: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  // Raw mode (no echo) before the prompt shows: anything typed after it is never echoed.
  input.setRawMode(true);
  input.setEncoding("utf8");
  input.resume();
  output.write(prompt);
  return new Promise((resolve, reject) => {
    let value = "";
    let escape = false;
    const finish = (result: string | undefined): void => {
      input.off("data", onData);
      input.setRawMode(false);
      input.pause();
      output.write("\n");
      if (result === undefined) reject(new SecretInterrupted("interrupted"));
      else resolve(result);
    };
    const onData = (chunk: string): void => {
      for (const character of chunk) {
        if (escape) {
          // Skip an escape sequence (arrow keys, bracketed paste markers): up to its final letter or `~`.
          if (/[A-Za-z~]/.test(character)) escape = false;
          continue;
        }
        if (character === "\r" || character === "\n") return finish(value);
        if (character === "\u0003") return finish(undefined);
        if (character === "\u0004") return finish(value);
        if (character === "\u007f" || character === "\b") {
          value = value.slice(0, -1);
          continue;
        }
        if (character === "\u001b") {
          escape = true;
          continue;
        }
        if (character < " ") continue;
        value += character;
      }
    };
    input.on("data", onData);
  });
}
