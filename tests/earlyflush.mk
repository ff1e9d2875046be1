# tests/earlyflush.mk: unit tests of src/transport/earlyflush.c, the stdio
# transport's early-write policy (included by tests/Makefile.am).
check_PROGRAMS += test_earlyflush
TESTS += test_earlyflush
test_earlyflush_SOURCES = test_earlyflush.c
