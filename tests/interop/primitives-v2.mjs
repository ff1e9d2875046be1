// tests/interop/primitives-v2.mjs: resources, prompts, completion and their
// list_changed notifications (the checks of primitives.mjs) driven by the
// official TypeScript client 2.x (@modelcontextprotocol/client) over stdio,
// pinned to 2026-07-28 (subscriptions/listen, SEP-2164 errors, input_required
// prompts) and in the legacy era; then the tasks extension (SEP-2663) in
// 2026-07-28. All in both isolation modes. Run by tests/interop.mk through
// run.mjs.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { Checker, closeAndCheckExit, collectErrors, serverParams, serverProcess, tapTransport } from './common.mjs';
import { elicitor, Fixtures, runPrimitives } from './primitives.mjs';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const ITEMS = { listResources: 'resources', listResourceTemplates: 'resourceTemplates', listPrompts: 'prompts' };
const t = new Checker();

// Starts toolhost and connects a 2.x client in ERA ('modern': pinned to
// 2026-07-28; 'legacy': initialize), declaring CAPABILITIES.
async function connect(era, opts, capabilities = {}) {
  const transport = new StdioClientTransport(serverParams(opts));
  const wire = tapTransport(transport);
  const options = { capabilities: { elicitation: {}, ...capabilities }, listChanged: opts.listChanged };
  if (era === 'modern') options.versionNegotiation = { mode: { pin: MODERN } };
  const client = new Client({ name: 'toolhost-interop-primitives-v2', version: '2.0.0' }, options);
  const errors = collectErrors(client);
  const { asked, answer } = elicitor();
  // Legacy: toolhost asks with elicitation/create; modern: the SDK fulfils
  // an input_required result through the same handler and retries.
  client.setRequestHandler('elicitation/create', (req) => answer(req.params));
  await client.connect(transport);
  t.eq(`primitives-v2 ${era}: negotiated era`, client.getProtocolEra(), era);
  return {
    client,
    wire,
    errors,
    asked,
    era,
    proc: serverProcess(transport),
    // 2.x rebuilds a -32002 that carries data.uri (a legacy server's "not
    // found") as its ResourceNotFoundError, code -32602, as it does -32602.
    notFoundCode: -32602,
    onNotification: (method, fn) => client.setNotificationHandler(method, fn),
    // 2.x walks every page itself when no cursor is given, and caches the
    // list (ttlMs): a list read after a reload is fresh only if the
    // list_changed notification evicted it, so the default cache mode stays.
    listAll: async (verb) => (await client[verb]())[ITEMS[verb]]
  };
}

for (const era of ['modern', 'legacy'])
  await t.guard(`primitives-v2 ${era}`, () => runPrimitives(t, `primitives-v2 ${era}`, (opts) => connect(era, opts)));

// ---- Tasks (2026-07-28 extension) ----
// Client 2.4.0 has no API for the tasks extension: it types tasks/* as
// 2025-11-25 vocabulary without a runtime, and its result decoder refuses
// resultType "task" (UNSUPPORTED_RESULT_TYPE). So the calls go through its
// generic request() with a schema that accepts any result, and the
// CreateTaskResult of tools/call, which the SDK refuses, is read off the wire.
const ANY = { '~standard': { version: 1, vendor: 'toolhost-interop', validate: (value) => ({ value }) } };

async function tasks(label, c) {
  const p = (s) => `${label}: ${s}`;
  const request = (method, params) => c.client.request({ method, params }, ANY);

  // Calls TOOL as a task; returns the taskId from the wire.
  const create = async (name, args) => {
    const from = c.wire.length;
    let err;
    try {
      await c.client.callTool({ name, arguments: args });
    } catch (e) {
      err = e;
    }
    t.eq(p(`${name}: the SDK refuses the task result (no tasks API in 2.4.0)`), [err?.code, err?.data?.resultType],
         ['UNSUPPORTED_RESULT_TYPE', 'task']);
    // The last tools/call sent: after an input_required round, the retry.
    const req = c.wire.slice(from).findLast(({ dir, msg }) => dir === 'out' && msg.method === 'tools/call')?.msg;
    t.ok(p(`${name}: the call declared the extension`),
         req?.params?._meta?.['io.modelcontextprotocol/clientCapabilities']?.extensions?.[TASKS] !== undefined,
         JSON.stringify(req?.params?._meta));
    const res = c.wire.find(({ dir, msg }) => dir === 'in' && msg.id === req?.id && msg.method === undefined)?.msg?.result;
    t.eq(p(`${name}: CreateTaskResult`), [res?.resultType, res?.status, typeof res?.taskId, typeof res?.createdAt,
                                          Number.isInteger(res?.ttlMs)], ['task', 'working', 'string', 'string', true]);
    return res?.taskId;
  };
  // tasks/get until the status leaves "working" (bounded by count).
  const settle = async (taskId) => {
    for (let i = 0; i < 2000; i++) {
      const task = await request('tasks/get', { taskId });
      if (task.status !== 'working') return task;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`task ${taskId} stayed working`);
  };

  // The SDK's 2026-07-28 codec deletes Tool.execution (it is extension
  // vocabulary now), so taskSupport is read off the wire.
  await t.guard(p('tools/list task support'), async () => {
    const from = c.wire.length;
    const { tools: seen } = await c.client.listTools(undefined, { cacheMode: 'bypass' });
    const req = c.wire.slice(from).find(({ dir, msg }) => dir === 'out' && msg.method === 'tools/list')?.msg;
    const tools = c.wire.find(({ dir, msg }) => dir === 'in' && msg.id === req?.id)?.msg?.result?.tools ?? [];
    t.eq(p('the SDK lists the same tools'), seen.map((tool) => tool.name), tools.map((tool) => tool.name));
    const by = new Map(tools.map((tool) => [tool.name, tool]));
    t.eq(p('taskSupport'), ['slow_compute', 'failing_job', 'greet'].map((n) => by.get(n)?.execution?.taskSupport),
         ['optional', 'required', undefined]);
  });

  await t.guard(p('create, poll, result'), async () => {
    const id = await create('slow_compute', { seconds: 0.2, label: 'interop' });
    const first = await request('tasks/get', { taskId: id });
    t.eq(p('tasks/get right after creation finds it'), first.taskId, id);
    const done = await settle(id);
    t.eq(p('slow_compute completes with its result inlined'), [done.status, done.result?.content],
         ['completed', [{ type: 'text', text: "Computed 'interop' after 0.2 s" }]]);
  });

  await t.guard(p('a tool error'), async () => {
    const done = await settle(await create('failing_job', {}));
    t.eq(p('failing_job is completed with isError'), [done.status, done.result?.isError, done.result?.content],
         ['completed', true, [{ type: 'text', text: 'failing_job failed, as it always does' }]]);
  });

  await t.guard(p('input through tasks/update'), async () => {
    const id = await create('confirm_delete', { filename: 'f.txt' });
    const waiting = await settle(id);
    t.eq(p('confirm_delete waits for input'), [waiting.status, waiting.inputRequests?.confirm?.params?.message],
         ['input_required', 'Delete this file?']);
    const ack = await request('tasks/update', {
      taskId: id, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } }
    });
    t.eq(p('tasks/update acks'), Object.keys(ack).filter((k) => k !== '_meta'), []);
    const done = await settle(id);
    t.eq(p('confirm_delete completes with the answer'), [done.status, done.result?.content],
         ['completed', [{ type: 'text', text: 'Deleted f.txt' }]]);
  });

  // Input gathered before the task: the SDK answers the input_required
  // round through its elicitation handler and retries; the retry becomes
  // the task.
  await t.guard(p('input before the task'), async () => {
    const asked = c.asked.length;
    const done = await settle(await create('test_tool_with_task', {}));
    t.eq(p('the SDK was asked for the name'), c.asked.slice(asked), ['What is your name?']);
    t.eq(p('the task greets the name given'), [done.status, done.result?.content],
         ['completed', [{ type: 'text', text: 'Hello, Ada, from a task' }]]);
  });

  await t.guard(p('cancel'), async () => {
    const id = await create('slow_compute', { seconds: 600 });
    const ack = await request('tasks/cancel', { taskId: id });
    t.eq(p('tasks/cancel acks'), Object.keys(ack).filter((k) => k !== '_meta'), []);
    t.eq(p('a cancelled task stays cancelled'), (await request('tasks/get', { taskId: id })).status, 'cancelled');
  });

  await t.guard(p('unknown task'), async () => {
    const from = c.wire.length;
    let err;
    try {
      await request('tasks/get', { taskId: 'no-such-task' });
    } catch (e) {
      err = e;
    }
    t.eq(p('an unknown taskId: -32602'), err?.code, -32602);
    const req = c.wire.slice(from).find(({ dir, msg }) => dir === 'out' && msg.method === 'tasks/get')?.msg;
    t.eq(p('unknown task error on the wire'),
         c.wire.find(({ dir, msg }) => dir === 'in' && msg.id === req?.id)?.msg?.error?.message,
         "Invalid params: unknown task 'no-such-task' (never created, or past its TTL)");
  });
}

const fx = new Fixtures();
try {
  for (const mode of ['process', 'none']) {
    const label = `primitives-v2 modern ${mode} tasks`;
    let c;
    try {
      // The extension is declared as a client capability: the SDK puts it
      // in every request's _meta.
      c = await connect('modern', { dirs: [fx.pluginDir(['task_tools'])], args: [`--isolation=${mode}`] },
                        { extensions: { [TASKS]: {} } });
      await tasks(label, c);
      t.eq(`${label}: no client errors`, c.errors.map(String), []);
      await closeAndCheckExit(t, label, c.client, c.proc);
    } catch (err) {
      t.ok(`${label}: session`, false, err?.stack ?? err);
    } finally {
      await c?.client.close().catch(() => {});
    }
  }
} finally {
  fx.cleanup();
}
process.exitCode = t.report();
