/*
** typed.c: PLACEHOLDER until typed functions land: refuses every
** th_function.
*/
#include "config.h"

#include "typed.h"

th_rc th_typed_prepare(const th_function *fn, th_typed **out, json_object **input_schema,
                       json_object **output_schema, th_err *err)
{
    (void)fn;
    (void)out;
    (void)input_schema;
    (void)output_schema;
    return th_err_set(err, TH_ERR_VALUE, "typed functions are not supported yet");
}

th_rc th_typed_invoke(const th_typed *typed, th_call *call, json_object *args)
{
    (void)typed;
    (void)call;
    (void)args;
    return TH_ERR_TOOL;
}

void th_typed_free(th_typed *typed)
{
    (void)typed;
}
