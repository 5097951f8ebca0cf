// cli_common.h — shared pieces of the `hologram` subcommands: exit codes, error printing,
// option parsing helpers and file reading.
#ifndef HG_CLI_COMMON_H
#define HG_CLI_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "hologram.h"

// Exit codes of every subcommand.
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

// Each subcommand: argv[0] is the subcommand name.
int cmd_info(int argc, char** argv);
int cmd_check(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);

// "hologram CMD: error: ..." on stderr; returns CLI_USAGE (usage) or CLI_FAIL (error).
int cli_usage(const char* cmd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_fail(const char* cmd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Prints "hologram CMD: error: WHAT: HG_ERR_X: <hg_last_error()>"; returns CLI_FAIL.
int cli_hg_fail(const char* cmd, hg_status st, const char* what);

int cli_is_help(const char* arg);
// Option with a value: matches "--name VALUE" (consuming argv[i+1]) and "--name=VALUE".
// Returns 1 and sets *value on a match, 0 when arg is another option, -1 when the value is missing.
int cli_opt(int argc, char** argv, int* i, const char* name, const char** value);

// Parses an unsigned decimal/hex integer (whole string, no sign) up to max.
int cli_parse_u64(const char* s, uint64_t max, uint64_t* out);
// "X[,Y[,Z]]" (missing dimensions are 1); each >= 1.
int cli_parse_dim3(const char* s, hg_dim3* out);

// Reads a whole file ("-" = stdin) into a malloc'd NUL-terminated buffer; NULL + errno message.
char* cli_read_file(const char* path, size_t* out_len, char* err, size_t errlen);

// Writes s as a JSON string literal (with quotes) to f.
void cli_json_string(FILE* f, const char* s);

#endif
