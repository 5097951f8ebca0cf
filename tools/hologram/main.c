// main.c — `hologram` command-line tool: dispatches to the subcommands (cmd_*.c).
#include <stdio.h>
#include <string.h>

#include "cli_common.h"

static void usage(FILE* f) {
    fprintf(f,
            "Usage: hologram [--version] [--help] <command> [options]\n"
            "\n"
            "Commands:\n"
            "  info     version, build features, CPU features, threads, backends and devices\n"
            "  check    parse and validate an Atlas ISA program, print its canonical text\n"
            "  run      run an Atlas ISA program with inputs/outputs from .npy files\n"
            "  bench    measure ISA kernels against STREAM-like C kernels of the same traffic\n"
            "\n"
            "'hologram <command> --help' describes a command's options.\n"
            "Exit status: 0 success, 1 runtime or validation error, 2 usage error.\n");
}

int main(int argc, char** argv) {
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    const char* cmd = argv[1];
    if (cli_is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 || strcmp(cmd, "version") == 0) {
        // The header and the loaded library can differ when an old shared library is picked up.
        printf("hologram %s\n", hg_version());
        if (hg_version_number() != HG_VERSION_NUMBER)
            fprintf(stderr, "warning: the tool was built against %s but loaded library %s\n",
                    HG_VERSION_STRING, hg_version());
        return CLI_OK;
    }
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "hologram: error: unknown command '%s' (expected info, check, run or bench)\n\n",
            cmd);
    usage(stderr);
    return CLI_USAGE;
}
