# tests/worker.mk: the process boundary (included by tests/Makefile.am): the
# IPC framing, the out-of-process scanner and the worker processes. Hostile
# plugins they load live in hostile/ (registered in hostile.mk).
check_PROGRAMS += test_worker_ipc
TESTS += test_worker_ipc
test_worker_ipc_SOURCES = test_worker_ipc.c
