# tests/qualname.mk: toolboxes and qualified names (doc/registry-rules.md,
# section 7; included by
# tests/Makefile.am): unit tests of src/plugin/qualname.c with the registry,
# and integration tests driving src/toolhost in both isolation modes over
# stdio, HTTP and `toolhost call`, with the plugins of the rules' examples.
check_PROGRAMS += test_qualname test_qualified
TESTS += test_qualname test_qualified
test_qualname_SOURCES = test_qualname.c
test_qualified_SOURCES = test_qualified.c $(MCP_HARNESS)

check_LTLIBRARIES += qualplugins/filesystem.la qualplugins/memory.la qualplugins/server.la
qualplugins_filesystem_la_SOURCES = qualplugins/qual.c
qualplugins_filesystem_la_CPPFLAGS = $(AM_CPPFLAGS) -DQP_NAME=filesystem -DQP_EXTRA=read_file
qualplugins_filesystem_la_LDFLAGS = $(TEST_MODULE_FLAGS)
qualplugins_memory_la_SOURCES = qualplugins/qual.c
qualplugins_memory_la_CPPFLAGS = $(AM_CPPFLAGS) -DQP_NAME=memory -DQP_EXTRA=store_value_async
qualplugins_memory_la_LDFLAGS = $(TEST_MODULE_FLAGS)
qualplugins_server_la_SOURCES = qualplugins/qual.c
qualplugins_server_la_CPPFLAGS = $(AM_CPPFLAGS) -DQP_NAME=server -DQP_EXTRA=my__special__tool
qualplugins_server_la_LDFLAGS = $(TEST_MODULE_FLAGS)
