// cmd_info.c — `hologram info [--json]`: version, build, CPU, threads, backends and devices.
#include <stdio.h>
#include <string.h>

#include "cli_common.h"

static const char* k_help =
    "Usage: hologram info [--json]\n"
    "\n"
    "Prints the library version, build features (the CPU kernel sets built), the CPU kernel set\n"
    "that runs, the CPU's features, the number of CPU worker threads, where NVRTC and the\n"
    "compiled-kernel cache are, and for each backend (cpu, cuda, metal) whether it is available\n"
    "(or why not) and its devices. --json prints the same facts.\n"
    "\n"
    "Options:\n"
    "  --json     print one JSON object instead of text\n"
    "  -h, --help show this help\n";

static const hg_backend_kind k_backends[] = {HG_BACKEND_CPU, HG_BACKEND_CUDA, HG_BACKEND_METAL};
#define NBACKENDS (sizeof k_backends / sizeof k_backends[0])

static void print_text(const hg_build_info* bi, int threads, const hg_backend_info* bk,
                       const hg_status* bst) {
    printf("hologram %s\n", bi->version ? bi->version : hg_version());
    printf("build:        %s, %s\n", bi->compiler ? bi->compiler : "?",
           bi->build_type ? bi->build_type : "?");
    printf("features:     %s\n", bi->features ? bi->features : "");
    printf("cpu kernels:  %s\n", hg_cpu_kernel_set());
    printf("cpu features: %s\n", hg_cpu_features());
    if (threads > 0) printf("cpu threads:  %d\n", threads);
    else printf("cpu threads:  unknown (no CPU executor)\n");
    const char* nvrtc = hg_nvrtc_path();
    if (nvrtc) printf("nvrtc:        %s\n", nvrtc);
    else printf("nvrtc:        not found: %s\n", hg_last_error());
    const char* cache = hg_kernel_cache_dir();
    if (cache) printf("kernel cache: %s\n", cache);
    else printf("kernel cache: none: %s\n", hg_last_error());
    printf("backends:\n");
    for (size_t b = 0; b < NBACKENDS; b++) {
        const char* name = hg_backend_name(k_backends[b]);
        if (bst[b] != HG_OK) {
            printf("  %-6s query failed: %s: %s\n", name, hg_status_string(bst[b]), hg_last_error());
            continue;
        }
        if (!bk[b].available) {
            printf("  %-6s unavailable: %s\n", name, bk[b].reason[0] ? bk[b].reason : "(no reason given)");
            continue;
        }
        printf("  %-6s available, %d device%s\n", name, bk[b].device_count,
               bk[b].device_count == 1 ? "" : "s");
        for (int d = 0; d < bk[b].device_count; d++) {
            hg_device_info di;
            hg_status st = hg_device_query(k_backends[b], d, &di);
            if (st != HG_OK) {
                printf("    [%d] query failed: %s: %s\n", d, hg_status_string(st), hg_last_error());
                continue;
            }
            printf("    [%d] %s, %.1f GiB, %d compute units", d, di.name,
                   (double)di.memory_bytes / (1024.0 * 1024.0 * 1024.0), di.compute_units);
            if (di.capability_major) printf(", compute capability %d.%d", di.capability_major,
                                            di.capability_minor);
            printf("\n");
        }
    }
}

static void print_json(const hg_build_info* bi, int threads, const hg_backend_info* bk,
                       const hg_status* bst) {
    printf("{\n  \"version\": ");
    cli_json_string(stdout, bi->version ? bi->version : hg_version());
    printf(",\n  \"compiler\": ");
    cli_json_string(stdout, bi->compiler);
    printf(",\n  \"build_type\": ");
    cli_json_string(stdout, bi->build_type);
    printf(",\n  \"features\": ");
    cli_json_string(stdout, bi->features);
    printf(",\n  \"cpu_kernels\": ");
    cli_json_string(stdout, hg_cpu_kernel_set());
    printf(",\n  \"cpu_features\": ");
    cli_json_string(stdout, hg_cpu_features());
    // Unknown (no CPU executor) is null, as the text says "unknown".
    if (threads > 0) printf(",\n  \"cpu_threads\": %d", threads);
    else printf(",\n  \"cpu_threads\": null");
    // A path, or null and the reason, as the text prints them.
    const char* nvrtc = hg_nvrtc_path();
    printf(",\n  \"nvrtc\": ");
    nvrtc ? cli_json_string(stdout, nvrtc) : (void)printf("null");
    printf(", \"nvrtc_reason\": ");
    cli_json_string(stdout, nvrtc ? "" : hg_last_error());
    const char* cache = hg_kernel_cache_dir();
    printf(",\n  \"kernel_cache\": ");
    cache ? cli_json_string(stdout, cache) : (void)printf("null");
    printf(", \"kernel_cache_reason\": ");
    cli_json_string(stdout, cache ? "" : hg_last_error());
    printf(",\n  \"backends\": [");
    for (size_t b = 0; b < NBACKENDS; b++) {
        printf("%s\n    {\"name\": ", b ? "," : "");
        cli_json_string(stdout, hg_backend_name(k_backends[b]));
        if (bst[b] != HG_OK) {
            printf(", \"available\": false, \"reason\": ");
            cli_json_string(stdout, hg_last_error());
            printf(", \"devices\": []}");
            continue;
        }
        printf(", \"available\": %s, \"reason\": ", bk[b].available ? "true" : "false");
        cli_json_string(stdout, bk[b].reason);
        printf(", \"devices\": [");
        for (int d = 0; bk[b].available && d < bk[b].device_count; d++) {
            hg_device_info di;
            if (hg_device_query(k_backends[b], d, &di) != HG_OK) continue;
            printf("%s{\"index\": %d, \"name\": ", d ? ", " : "", di.index);
            cli_json_string(stdout, di.name);
            printf(", \"memory_bytes\": %llu, \"compute_units\": %d, \"capability\": \"%d.%d\"}",
                   (unsigned long long)di.memory_bytes, di.compute_units, di.capability_major,
                   di.capability_minor);
        }
        printf("]}");
    }
    printf("\n  ]\n}\n");
}

int cmd_info(int argc, char** argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) { fputs(k_help, stdout); return CLI_OK; }
        if (strcmp(argv[i], "--json") == 0) { json = 1; continue; }
        return cli_usage("info", "unknown option '%s'", argv[i]);
    }
    hg_build_info bi;
    memset(&bi, 0, sizeof bi);
    hg_build_info_get(&bi);

    // The thread count is what a default CPU executor gets (env vars included).
    int threads = 0;
    hg_executor ex;
    if (hg_executor_create(HG_BACKEND_CPU, &ex) == HG_OK) {
        if (hg_executor_num_threads(ex, &threads) != HG_OK) threads = 0;
        hg_executor_destroy(ex);
    }

    hg_backend_info bk[NBACKENDS];
    hg_status bst[NBACKENDS];
    memset(bk, 0, sizeof bk);
    for (size_t b = 0; b < NBACKENDS; b++) bst[b] = hg_backend_query(k_backends[b], &bk[b]);

    if (json) print_json(&bi, threads, bk, bst);
    else print_text(&bi, threads, bk, bst);
    return CLI_OK;
}
