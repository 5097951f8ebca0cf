// cmd_check.c — `hologram check PROG.hasm`: parse + validate, print the canonical text.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

static const char* k_help =
    "Usage: hologram check [--quiet] PROGRAM.hasm\n"
    "\n"
    "Parses and validates an Atlas ISA text program (docs/isa.md) and prints its canonical text\n"
    "to stdout. PROGRAM '-' reads standard input. On a parse or validation error the status\n"
    "name and the message (naming the line or instruction) go to stderr and the exit status is 1.\n"
    "\n"
    "Options:\n"
    "  -q, --quiet  validate only, print nothing on success\n"
    "  -h, --help   show this help\n";

int cmd_check(int argc, char** argv) {
    const char* path = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (cli_is_help(a)) { fputs(k_help, stdout); return CLI_OK; }
        if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) { quiet = 1; continue; }
        if (a[0] == '-' && a[1] != 0) return cli_usage("check", "unknown option '%s'", a);
        if (path) return cli_usage("check", "more than one program given ('%s' and '%s')", path, a);
        path = a;
    }
    if (!path) return cli_usage("check", "missing the program file (use '-' for stdin)");

    char err[512];
    size_t len = 0;
    char* text = cli_read_file(path, &len, err, sizeof err);
    if (!text) return cli_fail("check", "%s", err);

    hg_program prog;
    hg_status st = hg_program_parse(text, len, &prog);
    free(text);
    if (st != HG_OK) {
        char what[600];
        snprintf(what, sizeof what, "%s is not a valid program", path);
        return cli_hg_fail("check", st, what);
    }
    int rc = CLI_OK;
    if (!quiet) {
        char* out = NULL;
        size_t out_len = 0;
        st = hg_program_print(prog, &out, &out_len);
        if (st != HG_OK) {
            rc = cli_hg_fail("check", st, "printing the program");
        } else {
            if (fwrite(out, 1, out_len, stdout) != out_len) rc = cli_fail("check", "cannot write stdout");
            hg_free(out);
        }
    }
    hg_program_destroy(prog);
    return rc;
}
