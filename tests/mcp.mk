# tests/mcp.mk: the mcp tests (included by tests/Makefile.am): unit tests of
# the JSON-RPC layer, and integration tests that drive the real src/toolhost
# over pipes (both MCP eras) with the test plugins in mcpplugins/, which make
# check leaves at mcpplugins/.libs/NAME.so.
MCP_HARNESS = mcp_harness.c mcp_harness.h
check_PROGRAMS += test_jsonrpc test_mcp_stdio test_mcp_legacy test_mcp_modern test_mcp_calls
TESTS += test_jsonrpc test_mcp_stdio test_mcp_legacy test_mcp_modern test_mcp_calls
# The stdio transport and process set-up, with hostile plugins (hostile.mk).
check_PROGRAMS += test_transport_stdio
TESTS += test_transport_stdio
test_transport_stdio_SOURCES = test_transport_stdio.c $(MCP_HARNESS)
test_jsonrpc_SOURCES = test_jsonrpc.c
# The quick JSON path against json-c's tokener.
check_PROGRAMS += test_fastjson
TESTS += test_fastjson
test_fastjson_SOURCES = test_fastjson.c
# The cheap lookups and serialiser against json-c.
check_PROGRAMS += test_jsontree
TESTS += test_jsontree
test_jsontree_SOURCES = test_jsontree.c
# The executable's calloc: src/calloc.c is compiled into the test (it
# includes it), so the test program has it as toolhost has it.
check_PROGRAMS += test_calloc
TESTS += test_calloc
test_calloc_SOURCES = test_calloc.c
test_mcp_stdio_SOURCES = test_mcp_stdio.c $(MCP_HARNESS)
test_mcp_legacy_SOURCES = test_mcp_legacy.c $(MCP_HARNESS)
test_mcp_modern_SOURCES = test_mcp_modern.c $(MCP_HARNESS)
test_mcp_calls_SOURCES = test_mcp_calls.c $(MCP_HARNESS)
# The exposure policy as a client sees it, at every revision.
check_PROGRAMS += test_exposure
TESTS += test_exposure
test_exposure_SOURCES = test_exposure.c http_client.c http_client.h $(MCP_HARNESS) jwt_keys.c jwt_keys.h
test_exposure_CFLAGS = $(AM_CFLAGS) $(JWT_CFLAGS)
test_exposure_LDADD = $(LDADD) $(JWT_LIBS) $(CRYPTO_LIBS)

check_LTLIBRARIES += mcpplugins/slow.la mcpplugins/progress.la mcpplugins/logger.la \
	mcpplugins/printer.la mcpplugins/failer.la mcpplugins/rich.la
mcpplugins_slow_la_SOURCES = mcpplugins/slow.c
mcpplugins_slow_la_LDFLAGS = $(TEST_MODULE_FLAGS)
mcpplugins_progress_la_SOURCES = mcpplugins/progress.c
mcpplugins_progress_la_LDFLAGS = $(TEST_MODULE_FLAGS)
mcpplugins_logger_la_SOURCES = mcpplugins/logger.c
mcpplugins_logger_la_LDFLAGS = $(TEST_MODULE_FLAGS)
mcpplugins_printer_la_SOURCES = mcpplugins/printer.c
mcpplugins_printer_la_LDFLAGS = $(TEST_MODULE_FLAGS)
mcpplugins_failer_la_SOURCES = mcpplugins/failer.c
mcpplugins_failer_la_LDFLAGS = $(TEST_MODULE_FLAGS)
mcpplugins_rich_la_SOURCES = mcpplugins/rich.c
mcpplugins_rich_la_LDFLAGS = $(TEST_MODULE_FLAGS)

# What plugins hand back stays valid on the wire (hostile/stats.so,
# hostile/setlocale.so), and the byte bound on requests in flight.
check_PROGRAMS += test_mcp_results
TESTS += test_mcp_results
test_mcp_results_SOURCES = test_mcp_results.c $(MCP_HARNESS)
check_PROGRAMS += test_callctx
TESTS += test_callctx
test_callctx_SOURCES = test_callctx.c
# A worker's result passed on as its bytes.
check_PROGRAMS += test_rawresult
TESTS += test_rawresult
test_rawresult_SOURCES = test_rawresult.c
# What a worker's frames do to the host's call (worker/frames.c).
check_PROGRAMS += test_worker_frames
TESTS += test_worker_frames
test_worker_frames_SOURCES = test_worker_frames.c
# Which call a worker's frame goes to, and the answer to its ASK (worker/route.c).
check_PROGRAMS += test_worker_route
TESTS += test_worker_route
test_worker_route_SOURCES = test_worker_route.c
# The pool's deadline timers.
check_PROGRAMS += test_workpool
TESTS += test_workpool
test_workpool_SOURCES = test_workpool.c
# Tools that ask the client (th_call_ask), with the conformance fixtures.
check_PROGRAMS += test_mcp_ask
TESTS += test_mcp_ask
test_mcp_ask_SOURCES = test_mcp_ask.c $(MCP_HARNESS)
# th_call_ask's checks and the requestState of protocol/mrtr.c.
check_PROGRAMS += test_ask
TESTS += test_ask
test_ask_SOURCES = test_ask.c
# It signs states with libcrypto itself, as a check apart from the host's
# (which opens libcrypto on first use: base/crypto.c).
test_ask_LDADD = $(LDADD) $(CRYPTO_LIBS)
