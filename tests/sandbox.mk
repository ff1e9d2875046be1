# tests/sandbox.mk: a plugin's sandbox (included by tests/Makefile.am): the
# attack corpus in sandboxplugins/, each tool trying one thing inside its
# worker, denied by default and allowed by the matching grant.
check_LTLIBRARIES += sandboxplugins/attacks.la
sandboxplugins_attacks_la_SOURCES = sandboxplugins/attacks.c
sandboxplugins_attacks_la_LDFLAGS = $(TEST_MODULE_FLAGS)

check_PROGRAMS += test_sandbox
TESTS += test_sandbox
test_sandbox_SOURCES = test_sandbox.c $(MCP_HARNESS)
test_sandbox_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS)
test_sandbox_LDADD = $(LDADD) $(SECCOMP_LIBS)
EXTRA_DIST += sandbox.mk
check_LTLIBRARIES += sandboxplugins/needy.la
sandboxplugins_needy_la_SOURCES = sandboxplugins/needy.c
sandboxplugins_needy_la_LDFLAGS = $(TEST_MODULE_FLAGS)
