import { definePlugin, PluginError } from 'ze-harness/plugin';

// A plugin model, listed in the catalog as `example.loud/shout` and selectable like any other.
// It answers without a provider: the last user text, upper-cased, streamed word by word. (A
// router would instead pick one of `listCandidates()` and `yield* delegate(ref, request)`.)
// Core runs it only while some provider model is available. A PluginError it throws fails the
// Turn with the first 200 characters of its message, so keep that message safe to show.
export default definePlugin({
  id: 'example.model',
  setup: (context) => {
    context.models.register({
      providerId: 'example.loud',
      providerDisplayName: 'Loud',
      modelId: 'shout',
      metadata: {
        displayName: 'Shout',
        capabilities: { input: ['text'], output: ['text'], tools: false },
        limits: { contextUnits: 32000, outputUnits: 4000 },
      },
      stream: async function* (request) {
        const user = request.messages.filter((message) => message.role === 'user').at(-1);
        const text = user?.content.find((part) => part.type === 'text')?.text;
        if (!text) throw new PluginError({ message: 'Shout needs a text prompt.' });
        yield { _tag: 'ResponseStarted' };
        const words = text.toUpperCase().split(/(?<= )/);
        for (const delta of words) yield { _tag: 'ContentDelta', index: 0, contentId: 'answer', contentType: 'text', delta };
        yield { _tag: 'ContentCompleted', index: 0, contentId: 'answer', content: { type: 'text', text: words.join('') } };
        yield { _tag: 'ResponseFinished', reason: 'stop' };
      },
    });
  },
});
