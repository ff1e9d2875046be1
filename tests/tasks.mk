# tests/tasks.mk: tasks (protocol/tasks.c), extension and 2025-11-25, over stdio, with
# the conformance fixtures (included by tests/Makefile.am).
check_PROGRAMS += test_mcp_tasks
TESTS += test_mcp_tasks
test_mcp_tasks_SOURCES = test_mcp_tasks.c $(MCP_HARNESS)
# The core tasks of 2025-11-25, served from the same store.
check_PROGRAMS += test_mcp_legacy_tasks
TESTS += test_mcp_legacy_tasks
test_mcp_legacy_tasks_SOURCES = test_mcp_legacy_tasks.c $(MCP_HARNESS)
