/*
** main.c: command-line options, plugin loading, then serving.
*/
#include "config.h"

#include <stdio.h>

#include "loader.h"
#include "log.h"

int main(int argc, char **argv)
{
    th_registry *reg = th_registry_new();
    th_load_stats stats = {0};
    for (int i = 1; i < argc; i++)
        th_loader_load_dir(reg, argv[i], NULL, &stats);
    th_log(TH_LOG_INFO, "loaded %zu tools from %zu plugins, %zu plugins refused", stats.tools_loaded,
           stats.plugins_loaded, stats.plugins_refused);
    th_registry_unref(reg);
    return 0;
}
