import { createMessage, step, toolOk, type Toolset } from '@kosong/core';
import { EchoChatProvider } from '@kosong/provider-echo';

// What each request brings: who asks, and a handle on the data (here a Map standing in for a database).
interface RequestContext {
  readonly userId: string;
  readonly db: ReadonlyMap<string, readonly string[]>;
}

const orders: Toolset<RequestContext> = {
  tools: [{ name: 'my_orders', description: "Lists the user's orders.", parameters: { type: 'object' } }],
  handle(call, { context }) {
    const list = context ? (context.db.get(context.userId) ?? []) : [];
    return { toolCallId: call.id, returnValue: toolOk({ output: list.join(', ') || 'no orders' }) };
  },
};

const db = new Map([
  ['ada', ['book', 'lamp']],
  ['alan', ['chess set']],
]);
// The echo provider plays the script: a model calling the tool.
const script = 'tool_call: {"id": "c1", "name": "my_orders", "arguments": "{}"}';
const runs = ['ada', 'alan'].map(async (userId) => {
  const result = await step({
    provider: new EchoChatProvider(),
    systemPrompt: '',
    toolset: orders,
    history: [createMessage('user', script)],
    context: { userId, db }, // this run's own: steps running at once never see each other's
  });
  const [orderList] = await result.toolResults();
  return `${userId}: ${String(orderList?.returnValue.output)}`;
});
console.log((await Promise.all(runs)).join('\n'));
// ada: book, lamp
// alan: chess set
