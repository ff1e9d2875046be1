// tests/interop/tasks-v1.mjs: the experimental tasks of 2025-11-25 served by
// toolhost, driven by the official TypeScript SDK 1.x client's
// experimental.tasks over stdio: capabilities and taskSupport, a task created,
// polled and its result fetched, a failed task, input_required answered
// through an elicitation, cancel, list, and the -32601 of a "required" tool
// called plainly. Run by tests/interop.mk through run.mjs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import { Checker, closeAndCheckExit, collectErrors, serverParams, serverProcess, tapTransport } from './common.mjs';

const t = new Checker();
const transport = new StdioClientTransport(serverParams());
const wire = tapTransport(transport);
const client = new Client({ name: 'toolhost-interop-tasks-v1', version: '1.0.0' },
                          { capabilities: { elicitation: {} } });
collectErrors(client);
const L = 'tasks-v1';
const RELATED = 'io.modelcontextprotocol/related-task';

// Every message callToolStream yields, until it ends.
async function stream(params, options) {
  const seen = [];
  for await (const m of client.experimental.tasks.callToolStream(params, CallToolResultSchema, options))
    seen.push(m);
  return seen;
}

try {
  await client.connect(transport);
  const proc = serverProcess(transport);
  const caps = client.getServerCapabilities();
  t.ok(`${L}: capabilities.tasks.requests.tools.call`, caps?.tasks?.requests?.tools?.call !== undefined,
       JSON.stringify(caps?.tasks));
  t.ok(`${L}: capabilities.tasks list and cancel`, caps?.tasks?.list !== undefined && caps?.tasks?.cancel !== undefined,
       JSON.stringify(caps?.tasks));

  const { tools } = await client.listTools(); // also teaches the client which tools are tasks
  const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
  t.eq(`${L}: taskSupport of the fixtures`,
       [support.slow_compute, support.failing_job, support.greet], ['optional', 'required', undefined]);

  await t.guard(`${L}: a task runs to its result`, async () => {
    const seen = await stream({ name: 'slow_compute', arguments: { seconds: 0.2, label: 'v1' } },
                              { task: { ttl: 60000 } });
    const created = seen.find((m) => m.type === 'taskCreated');
    const result = seen.find((m) => m.type === 'result');
    t.ok(`${L}: taskCreated`, created?.task?.status === 'working' && typeof created.task.taskId === 'string',
         JSON.stringify(seen));
    t.eq(`${L}: the granted ttl`, created?.task?.ttl, 60000);
    t.eq(`${L}: the result`, result?.result?.content, [{ type: 'text', text: "Computed 'v1' after 0.2 s" }]);
    t.eq(`${L}: the result names its task`, result?.result?._meta?.[RELATED]?.taskId, created?.task?.taskId);
    const task = await client.experimental.tasks.getTask(created.task.taskId);
    t.eq(`${L}: tasks/get after the end`, task.status, 'completed');
    const again = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    t.eq(`${L}: tasks/result again`, again.content, result?.result?.content);
  });

  await t.guard(`${L}: a failing task`, async () => {
    const seen = await stream({ name: 'failing_job', arguments: {} });
    const created = seen.find((m) => m.type === 'taskCreated');
    const last = seen.at(-1);
    t.ok(`${L}: failing_job ends failed`, last?.type === 'error' && /failed/.test(last.error?.message),
         JSON.stringify(seen));
    const task = await client.experimental.tasks.getTask(created.task.taskId);
    t.eq(`${L}: failed status`, task.status, 'failed');
    t.ok(`${L}: failed statusMessage`, /failing_job failed/.test(task.statusMessage ?? ''), JSON.stringify(task));
    const res = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    t.eq(`${L}: a failed task's result is the isError result`, res.isError, true);
  });

  await t.guard(`${L}: input_required through elicitation`, async () => {
    let asked;
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked = req.params;
      return { action: 'accept', content: { confirm: true } };
    });
    const seen = await stream({ name: 'confirm_delete', arguments: { filename: 'notes.txt' } }, { task: {} });
    const result = seen.find((m) => m.type === 'result');
    t.eq(`${L}: the elicited answer reached the task`, result?.result?.content,
         [{ type: 'text', text: 'Deleted notes.txt' }]);
    const created = seen.find((m) => m.type === 'taskCreated');
    t.eq(`${L}: the elicitation names its task`, asked?._meta?.[RELATED]?.taskId, created?.task?.taskId);
    t.ok(`${L}: input_required was seen`,
         wire.some(({ dir, msg }) => dir === 'in' && (msg.params?.status === 'input_required' ||
                                                      msg.result?.status === 'input_required')));
  });

  await t.guard(`${L}: cancel`, async () => {
    let taskId;
    for await (const m of client.experimental.tasks.callToolStream(
      { name: 'slow_compute', arguments: { seconds: 60 } }, CallToolResultSchema, { task: {} })) {
      if (m.type === 'taskCreated') {
        taskId = m.task.taskId;
        break;
      }
    }
    const res = await client.experimental.tasks.cancelTask(taskId);
    t.eq(`${L}: tasks/cancel answers the cancelled task`, [res.taskId, res.status], [taskId, 'cancelled']);
    const err = await client.experimental.tasks.cancelTask(taskId).then(() => null, (e) => e);
    t.eq(`${L}: cancelling it again is -32602`, err?.code, -32602);
    const task = await client.experimental.tasks.getTask(taskId);
    t.eq(`${L}: it stays cancelled`, task.status, 'cancelled');
  });

  await t.guard(`${L}: list`, async () => {
    const { tasks, nextCursor } = await client.experimental.tasks.listTasks();
    const statuses = tasks.map((task) => task.status).sort();
    t.eq(`${L}: every task of the session, in one page`, [statuses, nextCursor],
         [['cancelled', 'completed', 'completed', 'failed'], undefined]);
  });

  await t.guard(`${L}: a required tool called plainly`, async () => {
    const err = await client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {} } },
                                     CallToolResultSchema).then(() => null, (e) => e);
    t.eq(`${L}: -32601`, err?.code, -32601);
  });

  await closeAndCheckExit(t, L, client, proc);
} catch (err) {
  t.ok(`${L}: session`, false, err?.stack ?? err);
} finally {
  await client.close().catch(() => {});
}
process.exitCode = t.report();
