# tests/observe.mk: what an operator watches: the sd_notify messages a
# service manager gets (test_notify).
check_PROGRAMS += test_notify
TESTS += test_notify
test_notify_SOURCES = test_notify.c
EXTRA_DIST += observe.mk
