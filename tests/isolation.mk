# tests/isolation.mk: workers kept from the host and from each other
# (included by tests/Makefile.am): isolationplugins/probe.c, built as
# attacker.so and victim.so, tries each attack from inside its worker.
check_PROGRAMS += test_isolation
TESTS += test_isolation
test_isolation_SOURCES = test_isolation.c $(MCP_HARNESS)

check_LTLIBRARIES += isolationplugins/attacker.la isolationplugins/victim.la
isolationplugins_attacker_la_SOURCES = isolationplugins/probe.c
isolationplugins_attacker_la_CPPFLAGS = $(AM_CPPFLAGS) -DIP_NAME=attacker
isolationplugins_attacker_la_LDFLAGS = $(TEST_MODULE_FLAGS)
isolationplugins_victim_la_SOURCES = isolationplugins/probe.c
isolationplugins_victim_la_CPPFLAGS = $(AM_CPPFLAGS) -DIP_NAME=victim
isolationplugins_victim_la_LDFLAGS = $(TEST_MODULE_FLAGS)

# worker/isolate.c itself, in children of the test.
check_PROGRAMS += test_isolate
TESTS += test_isolate
test_isolate_SOURCES = test_isolate.c
test_isolate_CFLAGS = $(AM_CFLAGS) $(SECCOMP_CFLAGS)
test_isolate_LDADD = $(LDADD) $(SECCOMP_LIBS)
