// Ze Harness embedded in a Node program: one Session, one Turn, the answer on stdout.
//   node clients/examples/embedded.mjs "Explain this repository"
// The model is the configured default (ze-harness.config.json or the global config.json), with
// the key from `ze-harness provider connect` or the provider's environment variable.
import { createEmbeddedHarness, textPrompt } from "ze-harness/sdk";

const harness = await createEmbeddedHarness({ cwd: process.cwd(), databaseFilename: ":memory:" });
try {
  const session = await harness.createSession();
  const turnId = crypto.randomUUID();
  await harness.submitPrompt(session.id, { delivery: "queue", turnId, prompt: textPrompt(process.argv[2] ?? "Say hello") });
  const turn = await harness.watchTurn(session.id, turnId);
  if (turn.outcome?.kind !== "completed") {
    process.stderr.write(`the Turn did not complete: ${JSON.stringify(turn.outcome)}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`${turn.outcome.text}\n`);
  }
} finally {
  await harness.close();
}
