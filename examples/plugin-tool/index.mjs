// The plugin object from the basic example, passed to the embedded SDK through `inlinePlugins`
// with no config file: one Session, one Turn, the answer on stdout.
//   npm run example:plugin-tool [-- --model PROVIDER/MODEL]
import { parseArgs } from 'node:util';
import { createEmbeddedHarness, textPrompt } from 'ze-harness/sdk';

import plugin from '../basic/plugin.mjs';

const { values } = parseArgs({ options: { model: { type: 'string', default: 'openai/gpt-5-mini' } } });
const harness = await createEmbeddedHarness({
  cwd: process.cwd(),
  databaseFilename: ':memory:',
  config: {
    model: values.model,
    permissions: [{ action: '*', resource: '*', effect: 'allow' }],
  },
  inlinePlugins: [plugin],
});
try {
  const session = await harness.createSession();
  const turnId = crypto.randomUUID();
  await harness.submitPrompt(session.id, { delivery: 'queue', turnId, prompt: textPrompt('double two') });
  const turn = await harness.watchTurn(session.id, turnId);
  if (turn.outcome?.kind !== 'completed') throw new Error(`plugin tool example failed: ${JSON.stringify(turn.outcome)}`);
  process.stdout.write(`${turn.outcome.text}\n`);
} finally {
  await harness.close();
}
