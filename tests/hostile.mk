# tests/hostile.mk: hostile and careless test plugins (included by
# tests/Makefile.am), one file each in hostile/, built for `make check` only.
# They are never loaded together: a test copies the ones it needs into a
# private directory (mh_private_dir, mh_hostile in mcp_harness.h).
# Add one as:
#   check_LTLIBRARIES += hostile/NAME.la
#   hostile_NAME_la_SOURCES = hostile/NAME.c
#   hostile_NAME_la_LDFLAGS = $(TEST_MODULE_FLAGS)

check_LTLIBRARIES += hostile/stats.la hostile/setlocale.la
hostile_stats_la_SOURCES = hostile/stats.c
hostile_stats_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_setlocale_la_SOURCES = hostile/setlocale.c
hostile_setlocale_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# The stdio transport and process set-up (test_transport_stdio).
check_LTLIBRARIES += hostile/stdin_reader.la hostile/stdin_shell.la hostile/close_stdin.la hostile/close_fds.la
hostile_stdin_reader_la_SOURCES = hostile/stdin_reader.c
hostile_stdin_reader_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_stdin_shell_la_SOURCES = hostile/stdin_shell.c
hostile_stdin_shell_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_close_stdin_la_SOURCES = hostile/close_stdin.c
hostile_close_stdin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_close_fds_la_SOURCES = hostile/close_fds.c
hostile_close_fds_la_LDFLAGS = $(TEST_MODULE_FLAGS)
check_LTLIBRARIES += hostile/child_sleep.la hostile/sigpipe_dfl.la hostile/unblock_term.la hostile/loop_register.la
hostile_child_sleep_la_SOURCES = hostile/child_sleep.c
hostile_child_sleep_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_sigpipe_dfl_la_SOURCES = hostile/sigpipe_dfl.c
hostile_sigpipe_dfl_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_unblock_term_la_SOURCES = hostile/unblock_term.c
hostile_unblock_term_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_loop_register_la_SOURCES = hostile/loop_register.c
hostile_loop_register_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# One file standing for 300 plugins (m000 ... m299), and its build whose
# every entry point faults: the scanner's batch boundaries (test_worker).
check_LTLIBRARIES += hostile/many.la hostile/many_crash.la
hostile_many_la_SOURCES = hostile/many.c
hostile_many_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_many_crash_la_SOURCES = hostile/many.c
hostile_many_crash_la_CPPFLAGS = $(AM_CPPFLAGS) -DMANY_CRASH
hostile_many_crash_la_LDFLAGS = $(TEST_MODULE_FLAGS)
check_LTLIBRARIES += hostile/crash.la
hostile_crash_la_SOURCES = hostile/crash.c
hostile_crash_la_LDFLAGS = $(TEST_MODULE_FLAGS)
check_LTLIBRARIES += hostile/close_fds_call.la
hostile_close_fds_call_la_SOURCES = hostile/close_fds_call.c
hostile_close_fds_call_la_LDFLAGS = $(TEST_MODULE_FLAGS)
check_LTLIBRARIES += hostile/aa_term_dfl.la
hostile_aa_term_dfl_la_SOURCES = hostile/aa_term_dfl.c
hostile_aa_term_dfl_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# Call deadlines and use after end (test_mcp_calls, test_loader).
check_LTLIBRARIES += hostile/overrun.la
hostile_overrun_la_SOURCES = hostile/overrun.c
hostile_overrun_la_LDFLAGS = $(TEST_MODULE_FLAGS)
check_LTLIBRARIES += hostile/keep_call.la hostile/keep_server.la
hostile_keep_call_la_SOURCES = hostile/keep_call.c
hostile_keep_call_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_keep_server_la_SOURCES = hostile/keep_server.c
hostile_keep_server_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# The process boundary (test_worker): plugins that crash, exit or
# hang while loading or in a handler.
check_LTLIBRARIES += hostile/crash_ctor.la hostile/crash_register.la hostile/exit_register.la hostile/die.la
hostile_crash_ctor_la_SOURCES = hostile/crash_ctor.c
hostile_crash_ctor_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_crash_register_la_SOURCES = hostile/crash_register.c
hostile_crash_register_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_exit_register_la_SOURCES = hostile/exit_register.c
hostile_exit_register_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_die_la_SOURCES = hostile/die.c
hostile_die_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# The hostile-plugin corpus (test_hostile): fake protocol output,
# oversized results, forks, a crashing destroy, many tools, leaks, sleeps.
check_LTLIBRARIES += hostile/fake_rpc.la hostile/big_result.la hostile/fork_stdout.la hostile/crash_destroy.la
hostile_fake_rpc_la_SOURCES = hostile/fake_rpc.c
hostile_fake_rpc_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_big_result_la_SOURCES = hostile/big_result.c
hostile_big_result_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_fork_stdout_la_SOURCES = hostile/fork_stdout.c
hostile_fork_stdout_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_crash_destroy_la_SOURCES = hostile/crash_destroy.c
hostile_crash_destroy_la_LDFLAGS = $(TEST_MODULE_FLAGS)
check_LTLIBRARIES += hostile/many_tools.la hostile/leak.la hostile/sleep30.la
hostile_many_tools_la_SOURCES = hostile/many_tools.c
hostile_many_tools_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_leak_la_SOURCES = hostile/leak.c
hostile_leak_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_sleep30_la_SOURCES = hostile/sleep30.c
hostile_sleep30_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# The worker limits (test_load_limits): the worker resource limits
# and reuse of an idle worker.
check_LTLIBRARIES += hostile/limits.la
hostile_limits_la_SOURCES = hostile/limits.c
hostile_limits_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# The in-process dispatch path (test_transport_stdio): which thread
# ran a call.
check_LTLIBRARIES += hostile/thread_name.la
hostile_thread_name_la_SOURCES = hostile/thread_name.c
hostile_thread_name_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# The registry cache (test_cache): a constructor that leaves a
# mark each time its plugin is loaded.
check_LTLIBRARIES += hostile/ctor_mark.la
hostile_ctor_mark_la_SOURCES = hostile/ctor_mark.c
hostile_ctor_mark_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# For authors: logging at registration (test_server_info) and the
# plugins `toolhost inspect` reports on (tests/authors/inspect.sh).
check_LTLIBRARIES += hostile/reglog.la
hostile_reglog_la_SOURCES = hostile/reglog.c
hostile_reglog_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# Scanner output tags (test_worker): two plugins that write to
# stderr while they are scanned, the last line unterminated.
check_LTLIBRARIES += hostile/noisy_a.la hostile/noisy_b.la
hostile_noisy_a_la_SOURCES = hostile/noisy_a.c
hostile_noisy_a_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_noisy_b_la_SOURCES = hostile/noisy_b.c
hostile_noisy_b_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# Call deadlines (test_hostile): a worker that takes 1 s to start.
check_LTLIBRARIES += hostile/slow_start.la
hostile_slow_start_la_SOURCES = hostile/slow_start.c
hostile_slow_start_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# A plugin configured by --set, TOOLHOST_GREET_*, --config (test_settings).
check_LTLIBRARIES += hostile/greet.la
hostile_greet_la_SOURCES = hostile/greet.c
hostile_greet_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# Callbacks beyond tools (test_hostile_primitives): crashes, a 50 MB resource, invalid
# UTF-8 and deadlines in read, get and completion functions.
check_LTLIBRARIES += hostile/primitives.la
hostile_primitives_la_SOURCES = hostile/primitives.c
hostile_primitives_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# A fork()ed child's SIGPIPE mask (test_transport_stdio).
check_LTLIBRARIES += hostile/sigpipe_fork.la
hostile_sigpipe_fork_la_SOURCES = hostile/sigpipe_fork.c
hostile_sigpipe_fork_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# Frames (test_hostile): a worker's RESULT frame that is not JSON, has a
# byte after its JSON, a raw newline or a byte that is not UTF-8.
check_LTLIBRARIES += hostile/forge_result.la
hostile_forge_result_la_SOURCES = hostile/forge_result.c hostile/forge.h
hostile_forge_result_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# Forged ASK, RESULT and stray frames around a real question (test_hostile_ask).
check_LTLIBRARIES += hostile/forge_ask.la
hostile_forge_ask_la_SOURCES = hostile/forge_ask.c hostile/forge.h
hostile_forge_ask_la_LDFLAGS = $(TEST_MODULE_FLAGS)
