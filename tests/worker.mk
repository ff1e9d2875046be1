# tests/worker.mk: the process boundary (included by tests/Makefile.am): the
# IPC framing, the out-of-process scanner and the worker processes. Hostile
# plugins they load live in hostile/ (registered in hostile.mk).
check_PROGRAMS += test_worker_ipc
TESTS += test_worker_ipc
test_worker_ipc_SOURCES = test_worker_ipc.c

# The tool-call tests (progress, logging, every content kind, structured
# content, cancellation, errors) run in process isolation, the default, as
# test_mcp_calls; again here with every plugin inside the host.
check_PROGRAMS += test_inproc_mcp_calls
TESTS += test_inproc_mcp_calls
test_inproc_mcp_calls_SOURCES = test_mcp_calls.c $(MCP_HARNESS)
test_inproc_mcp_calls_CPPFLAGS = $(AM_CPPFLAGS) -DMH_ISOLATION='"none"'

# Hostile plugins against the scanner (both isolation modes) and the workers.
check_PROGRAMS += test_worker
TESTS += test_worker
test_worker_SOURCES = test_worker.c $(MCP_HARNESS)

# The result tests (exact literals, limits, deep values), likewise.
check_PROGRAMS += test_inproc_mcp_results
TESTS += test_inproc_mcp_results
test_inproc_mcp_results_SOURCES = test_mcp_results.c $(MCP_HARNESS)
test_inproc_mcp_results_CPPFLAGS = $(AM_CPPFLAGS) -DMH_ISOLATION='"none"'

# The hostile-plugin corpus, in both isolation modes.
check_PROGRAMS += test_hostile
TESTS += test_hostile
test_hostile_SOURCES = test_hostile.c $(MCP_HARNESS)
# A plugin forging ASK and stray frames on its worker's pipe (hostile/forge_ask).
check_PROGRAMS += test_hostile_ask
TESTS += test_hostile_ask
test_hostile_ask_SOURCES = test_hostile_ask.c $(MCP_HARNESS)

# The load test: 100,000 pipelined calls, 1,000 in flight, against
# fast, slow, failing and crashing tools (TH_LOAD_CALLS sets fewer).
check_PROGRAMS += test_load
TESTS += test_load
test_load_SOURCES = test_load.c $(MCP_HARNESS)

# The worker resource limits and idle workers (hostile/limits.so).
check_PROGRAMS += test_load_limits
TESTS += test_load_limits
test_load_limits_SOURCES = test_load_limits.c $(MCP_HARNESS)

# A tool refused while loading is logged once, by the scan (both modes).
check_PROGRAMS += test_load_refusals
TESTS += test_load_refusals
test_load_refusals_SOURCES = test_load_refusals.c $(MCP_HARNESS)

# The hostile plugin against resources, prompts and completion.
check_PROGRAMS += test_hostile_primitives
TESTS += test_hostile_primitives
test_hostile_primitives_SOURCES = test_hostile_primitives.c $(MCP_HARNESS)
