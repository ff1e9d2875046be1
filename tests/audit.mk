# tests/audit.mk: what an operator holds callers to (included by
# tests/Makefile.am): the audit log (test_audit: lines, rotation, a full
# disk) and the rate and concurrency limits on tools/call (test_ratelimit:
# the buckets on a clock the test passes in; test_limits: over stdio and
# HTTP).
check_PROGRAMS += test_audit
TESTS += test_audit
test_audit_SOURCES = test_audit.c $(MCP_HARNESS)
check_PROGRAMS += test_ratelimit
TESTS += test_ratelimit
test_ratelimit_SOURCES = test_ratelimit.c
check_PROGRAMS += test_limits
TESTS += test_limits
test_limits_SOURCES = test_limits.c http_client.c http_client.h $(MCP_HARNESS)
EXTRA_DIST += audit.mk
