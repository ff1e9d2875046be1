/* SPDX-License-Identifier: MIT */
/*
** many.c: one file that can stand for 300 plugins. It exports
** register_m000_tool ... register_m299_tool, so a copy named mNNN.so is the
** plugin mNNN with the tool mNNN (the scanner's batch boundaries are
** tested with 300 copies). Built with -DMANY_CRASH, every entry point
** faults: a copy of that build is a plugin that crashes its scanner.
*/
#include <stdint.h>

#include <toolhost/plugin.h>

#ifdef MANY_CRASH
/* Through an address held as an integer, as crash_register.c faults: a
 * load through a null pointer would be UBSan's to report (an exit, in the
 * sanitizer build), not a signal. */
static volatile uintptr_t bad_address = 8;
#define MAYBE_CRASH() ((void)*(volatile int *)bad_address)
#else
#define MAYBE_CRASH() ((void)0)
#endif

static th_rc answer(th_call *call, json_object *args, void *user_data)
{
    (void)args;
    return th_call_text(call, user_data);
}

#define ONE(n) \
    static const th_tool tool_##n = { \
        TH_TOOL_INIT, \
        .name = #n, \
        .description = "Answers its own name.", \
        .input_schema = "{\"type\":\"object\",\"properties\":{}}", \
        .handler = answer, \
        .user_data = (void *)#n, \
    }; \
    TH_REGISTER(n) \
    { \
        (void)server; \
        MAYBE_CRASH(); \
        return &tool_##n; \
    }
#define TEN(p) ONE(p##0) ONE(p##1) ONE(p##2) ONE(p##3) ONE(p##4) ONE(p##5) ONE(p##6) ONE(p##7) ONE(p##8) ONE(p##9)
#define HUNDRED(p) \
    TEN(p##0) TEN(p##1) TEN(p##2) TEN(p##3) TEN(p##4) TEN(p##5) TEN(p##6) TEN(p##7) TEN(p##8) TEN(p##9)

HUNDRED(m0)
HUNDRED(m1)
HUNDRED(m2)
