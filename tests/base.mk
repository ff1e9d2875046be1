# tests/base.mk: unit tests of small src/base/ modules without a fragment
# of their own (included by tests/Makefile.am).
check_PROGRAMS += test_base64
TESTS += test_base64
test_base64_SOURCES = test_base64.c
