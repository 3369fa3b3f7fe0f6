// An observational event subscriber (`context.events.subscribe`), in an inline plugin: it sees
// the Turn's events as they happen (lossy: a subscriber that falls behind loses the oldest), and
// this program prints each event type once the Turn's terminal event arrived.
//   npm run example:events [-- --model PROVIDER/MODEL]
import { parseArgs } from 'node:util';
import { createEmbeddedHarness, textPrompt } from 'ze-harness/sdk';
import { definePlugin } from 'ze-harness/plugin';

const seen = [];
let terminal;
const finished = new Promise((resolve) => (terminal = resolve));

const observer = definePlugin({
  id: 'example.events',
  setup: (context) => {
    context.events.subscribe((event) => {
      seen.push(event.type);
      if (event.type === 'turn.terminal') terminal(event.outcome.kind);
    });
  },
});

const { values } = parseArgs({ options: { model: { type: 'string', default: 'openai/gpt-5-mini' } } });
const harness = await createEmbeddedHarness({ cwd: process.cwd(), databaseFilename: ':memory:', config: { model: values.model }, inlinePlugins: [observer] });
try {
  const session = await harness.createSession();
  const turnId = crypto.randomUUID();
  await harness.submitPrompt(session.id, { delivery: 'queue', turnId, prompt: textPrompt('Say hello.') });
  await harness.watchTurn(session.id, turnId);
  const outcome = await finished;
  process.stdout.write(`${[...new Set(seen)].join('\n')}\noutcome: ${outcome}\n`);
} finally {
  await harness.close();
}
