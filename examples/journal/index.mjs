// Runs one Turn in this folder (its ze-harness.config.json loads the plugin), then prints the
// plugin journal the Turn recorded: one `pluginId kind: summary` line per entry.
//   npm run example:journal [-- --model PROVIDER/MODEL]
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createEmbeddedHarness, sdk, textPrompt, unwrap } from 'ze-harness/sdk';

const { values } = parseArgs({ options: { model: { type: 'string' } } });
const harness = await createEmbeddedHarness({
  cwd: dirname(fileURLToPath(import.meta.url)),
  databaseFilename: ':memory:',
  ...(values.model !== undefined ? { config: { model: values.model } } : {}),
});
try {
  const session = await harness.createSession();
  const turnId = crypto.randomUUID();
  await harness.submitPrompt(session.id, { delivery: 'queue', turnId, prompt: textPrompt('Deploy to staging.') });
  const turn = await harness.watchTurn(session.id, turnId);
  if (turn.outcome?.kind !== 'completed') throw new Error(`journal example failed: ${JSON.stringify(turn.outcome)}`);
  const journal = await unwrap(sdk.listPluginJournal({ client: harness.api.client, path: { server: 'local', sessionId: session.id } }));
  for (const entry of journal.entries) process.stdout.write(`${entry.pluginId} ${entry.kind}: ${entry.summary}\n`);
} finally {
  await harness.close();
}
