// bench_report.c — `hologram bench` output: the markdown tables on stdout and the JSON file.
#include <stdio.h>
#include <time.h>

#include "bench_ctx.h"
#include "cli_common.h"

static double gbs(const bench_ctx* c, int k, double t) {
    return t > 0 ? k_bench_cases[k].bytes_per_elem * (double)c->n / t * 1e-9 : 0.0;
}

double bench_limit_time(const bench_ctx* c, int k, int median, const char** winner) {
    int kernel = k_bench_cases[k_bench_cases[k].limit].stream;
    double best = 0;
    *winner = "none";
    for (int j = 0; j < B_FIRST_ISA; j++) {
        // A build that did not run, or computed something else, is no limit.
        if (k_bench_cases[j].stream != kernel || c->skipped[j][0] || c->verified[j] == 0) continue;
        double t = median ? c->median[j] : c->best[j];
        if (best == 0 || t < best) {
            best = t;
            *winner = k_bench_cases[j].name;
        }
    }
    return best;
}

// limit time / case time (1.0 = at the measured bandwidth of the same traffic).
static double ratio(const bench_ctx* c, int k, int median) {
    const char* winner;
    return bench_limit_time(c, k, median, &winner) / (median ? c->median[k] : c->best[k]);
}

static const char* limit_name(const bench_ctx* c, int k, int median) {
    const char* winner;
    bench_limit_time(c, k, median, &winner);
    return winner;
}

static const char* verdict(const bench_ctx* c, int k) {
    const bench_case* d = &k_bench_cases[k];
    if (c->verified[k] == 0) return "**WRONG RESULTS**";
    if (d->target <= 0) return "";
    return ratio(c, k, 1) >= d->target ? "meets target (median)" : "below target (median)";
}

void bench_print_table(const bench_ctx* c, const char* cpu) {
    printf("hologram bench: %zu f32 elements (%.1f MiB per array), %d thread%s, %d repeats "
           "(+%d warm-up), ISA block %u\ncpu: %s (%s)\n\n", c->n,
           (double)c->n * 4.0 / (1024.0 * 1024.0), c->threads, c->threads == 1 ? "" : "s",
           c->repeats, c->warmup, c->block, cpu, hg_cpu_features());
    printf("| kernel | computes | B/elem | best ms | median ms | best GB/s | median GB/s | "
           "ours/limit best | ours/limit median | target | |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int k = 0; k < B_CASE_COUNT; k++) {
        const bench_case* d = &k_bench_cases[k];
        if (c->skipped[k][0]) {
            printf("| %s | %s | %.0f | — | — | — | — | — | — | %.2f | skipped: %s |\n", d->name,
                   d->what, d->bytes_per_elem, d->target, c->skipped[k]);
            continue;
        }
        printf("| %s | %s | %.0f | %.3f | %.3f | %.2f | %.2f |", d->name, d->what,
               d->bytes_per_elem, c->best[k] * 1e3, c->median[k] * 1e3, gbs(c, k, c->best[k]),
               gbs(c, k, c->median[k]));
        if (d->limit >= 0)
            printf(" %.3f (vs %s) | %.3f (vs %s) | %.2f | %s |\n", ratio(c, k, 0),
                   limit_name(c, k, 0), ratio(c, k, 1), limit_name(c, k, 1), d->target,
                   verdict(c, k));
        else
            printf(" — | — | — | %s |\n", c->verified[k] == 0 ? "**WRONG RESULTS**" : "");
    }
    printf("\nlimit = the fastest build (plain, vector, nt: streaming stores) of the C kernel with "
           "the same traffic on the same threads, named in each cell; ratio = limit time / "
           "measured time (1.0 = at the measured memory bandwidth).\n\n");
    printf("| latency | what | best ns/call | median ns/call | target ns | |\n"
           "|---|---|---:|---:|---:|---|\n");
    for (int i = 0; i < B_LAT_COUNT; i++) {
        const bench_latency* l = &c->lat[i];
        if (!l->name) continue;
        char target[32] = "—";
        if (l->target_ns > 0) snprintf(target, sizeof target, "≤ %.0f", l->target_ns);
        if (l->skipped[0])
            printf("| %s | %s | — | — | %s | skipped: %s |\n", l->name, l->what, target, l->skipped);
        else
            printf("| %s | %s | %.1f | %.1f | %s | |\n", l->name, l->what, l->best_ns, l->median_ns,
                   target);
    }
}

int bench_write_json(const bench_ctx* c, const char* path, const char* cpu) {
    FILE* f = fopen(path, "w");
    if (!f) return cli_fail("bench", "cannot create '%s'", path);
    char date[64];
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    fprintf(f, "{\n  \"machine\": {\"cpu\": ");
    cli_json_string(f, cpu);
    fprintf(f, ", \"threads\": %d, \"features\": ", c->threads);
    cli_json_string(f, hg_cpu_features());
    fprintf(f, "},\n  \"date\": \"%s\",\n  \"version\": ", date);
    cli_json_string(f, hg_version());
    fprintf(f, ",\n  \"size\": %zu,\n  \"dtype\": \"f32\",\n  \"repeats\": %d,\n  \"warmup\": %d,\n"
            "  \"block\": %u,\n  \"results\": [\n", c->n, c->repeats, c->warmup, c->block);
    // Throughput cases, then the latency cases (kind "latency": times_s are seconds per call
    // of each batch), in one list so tools read every case the same way.
    const char* sep = "";
    for (int k = 0; k < B_CASE_COUNT; k++) {
        const bench_case* d = &k_bench_cases[k];
        fprintf(f, "%s    {\"name\": \"%s\", \"kind\": \"%s\", \"computes\": ", sep, d->name, d->kind);
        sep = ",\n";
        cli_json_string(f, d->what);
        fprintf(f, ", \"bytes_per_elem\": %.0f", d->bytes_per_elem);
        if (d->limit >= 0 && !c->skipped[k][0])
            fprintf(f, ", \"limit\": \"%s\", \"limit_median\": \"%s\", \"target\": %.2f",
                    limit_name(c, k, 0), limit_name(c, k, 1), d->target);
        else if (d->limit >= 0)
            fprintf(f, ", \"target\": %.2f", d->target);
        if (d->limit < 0)
            fprintf(f, ", \"build\": \"%s\"", k_stream_variant_names[d->variant]);
        if (c->skipped[k][0]) {
            fprintf(f, ", \"skipped\": ");
            cli_json_string(f, c->skipped[k]);
            fprintf(f, "}");
            continue;
        }
        fprintf(f, ", \"best_s\": %.9g, \"median_s\": %.9g, \"best_gbs\": %.4f, \"median_gbs\": %.4f",
                c->best[k], c->median[k], gbs(c, k, c->best[k]), gbs(c, k, c->median[k]));
        if (d->limit >= 0)
            fprintf(f, ", \"ratio_best\": %.4f, \"ratio_median\": %.4f", ratio(c, k, 0),
                    ratio(c, k, 1));
        fprintf(f, ", \"verified\": %s", c->verified[k] == 1 ? "true" : "false");
        fprintf(f, ", \"times_s\": [");
        for (int r = 0; r < c->repeats; r++) fprintf(f, "%s%.9g", r ? ", " : "", c->times[k][r]);
        fprintf(f, "]}");
    }
    for (int i = 0; i < B_LAT_COUNT; i++) {
        const bench_latency* l = &c->lat[i];
        if (!l->name) continue;
        fprintf(f, "%s    {\"name\": \"%s\", \"kind\": \"latency\", \"computes\": ", sep, l->name);
        cli_json_string(f, l->what);
        if (l->target_ns > 0) fprintf(f, ", \"target_ns\": %.0f", l->target_ns);
        if (l->skipped[0]) {
            fprintf(f, ", \"skipped\": ");
            cli_json_string(f, l->skipped);
            fprintf(f, "}");
            continue;
        }
        fprintf(f, ", \"best_ns\": %.2f, \"median_ns\": %.2f, \"times_s\": [", l->best_ns,
                l->median_ns);
        for (int r = 0; r < l->ntimes; r++) fprintf(f, "%s%.6g", r ? ", " : "", l->times_ns[r] * 1e-9);
        fprintf(f, "]}");
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) return cli_fail("bench", "cannot write '%s'", path);
    return CLI_OK;
}
