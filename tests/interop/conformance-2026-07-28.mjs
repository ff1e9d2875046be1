// tests/interop/conformance-2026-07-28.mjs: the official conformance suite's
// --requirements 2026-07-28 against toolhost over HTTP (see conformance.mjs).
import { runConformance } from './conformance.mjs';

await runConformance('2026-07-28', [
  'server-stateless', 'tools-list', 'tools-call-simple-text', 'tools-call-image', 'tools-call-audio',
  'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-error', 'tools-call-with-progress',
  'server-sse-multiple-streams', 'sep-2164-resource-not-found', 'dns-rebinding-protection', 'caching',
  'json-schema-2020-12', 'http-header-validation', 'http-custom-header-server-validation',
  // The tasks extension (SEP-2663), served with tests/conformance/task_tools.c.
  'tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields', 'tasks-request-state-removal',
  'tasks-mrtr-input', 'tasks-request-headers', 'tasks-dispatch-and-envelope', 'tasks-status-notifications',
  'tasks-required-task-error', 'tasks-mrtr-composition'
], [
  // The skills extension (SEP-2640), served with tests/conformance/conformance_skills.c;
  // declared from 2026-07-28 on, where capabilities.extensions exists.
  'sep-2640-skills-manifest', 'sep-2640-skills-enumeration', 'sep-2640-skills-directory'
]);
