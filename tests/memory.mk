# tests/memory.mk: what one request or a slow reader can make the host hold
# (included by tests/Makefile.am): batches, parsed arguments in flight,
# answers queued for a client that does not read, measured as host RSS.
check_PROGRAMS += test_memory_bounds
TESTS += test_memory_bounds
test_memory_bounds_SOURCES = test_memory_bounds.c $(MCP_HARNESS)
