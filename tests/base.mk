# tests/base.mk: unit tests of small src/base/ modules without a fragment
# of their own (included by tests/Makefile.am).
check_PROGRAMS += test_b64url
TESTS += test_b64url
test_b64url_SOURCES = test_b64url.c
