# tests/interop.mk: the interop tests (included by tests/Makefile.am).
