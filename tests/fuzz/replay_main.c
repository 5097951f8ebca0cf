// Runs LLVMFuzzerTestOneInput over every file of the directories given as arguments (recursing
// into subdirectories): the fuzz target's properties checked on the seed corpus in every build,
// without libFuzzer. Exits non-zero if a directory cannot be read or holds no files.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t* buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t* q = realloc(buf, cap *= 2);
            if (!q) { free(buf); buf = NULL; }
            else buf = q;
        }
    }
    fclose(f);
    if (!buf) return -1;
    // An exact-size copy, so reads past the end are caught by AddressSanitizer.
    uint8_t* exact = malloc(n ? n : 1);
    if (n) memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

static int run_dir(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return -1;
    }
    int count = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0) continue;
        int r = S_ISDIR(st.st_mode) ? run_dir(path) : run_file(path);
        if (r < 0) {
            closedir(d);
            return -1;
        }
        count += r;
    }
    closedir(d);
    return count;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR...\n", argv[0]);
        return 2;
    }
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int n = run_dir(argv[i]);
        if (n <= 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[i], n < 0 ? "unreadable" : "no files");
            return 1;
        }
        total += n;
    }
    printf("replay: %d inputs passed\n", total);
    return 0;
}
