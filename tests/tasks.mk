# tests/tasks.mk: the tasks extension (protocol/tasks.c) over stdio, with
# the conformance fixtures (included by tests/Makefile.am).
check_PROGRAMS += test_mcp_tasks
TESTS += test_mcp_tasks
test_mcp_tasks_SOURCES = test_mcp_tasks.c $(MCP_HARNESS)
