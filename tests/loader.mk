# tests/loader.mk: the loader tests (included by tests/Makefile.am).
