# tests/http.mk: the Streamable HTTP transport (included by tests/Makefile.am):
# integration tests that drive the real src/toolhost with --http from a plain
# socket client. The conformance suite over HTTP is in interop.mk.
check_PROGRAMS += test_http
TESTS += test_http
test_http_SOURCES = test_http.c $(MCP_HARNESS)
