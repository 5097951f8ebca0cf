// Uses the installed libhologram: a CPU executor, a buffer, a write and a read.
#include <hologram.h>
#include <stdio.h>

int main(void) {
    if (hg_version_number() != HG_VERSION_NUMBER) {
        fprintf(stderr, "header %s does not match library %s\n", HG_VERSION_STRING, hg_version());
        return 1;
    }
    hg_executor ex;
    hg_buffer buf;
    if (hg_executor_create(HG_BACKEND_CPU, &ex) != HG_OK) {
        fprintf(stderr, "executor: %s\n", hg_last_error());
        return 1;
    }
    float in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {0};
    if (hg_buffer_create(ex, HG_DTYPE_F32, 8, &buf) != HG_OK ||
        hg_buffer_write(buf, 0, in, 8) != HG_OK || hg_buffer_read(buf, 2, out, 6) != HG_OK) {
        fprintf(stderr, "buffer: %s\n", hg_last_error());
        return 1;
    }
    for (int i = 0; i < 6; i++)
        if (out[i] != in[i + 2]) {
            fprintf(stderr, "read back %g at %d, want %g\n", out[i], i, in[i + 2]);
            return 1;
        }
    hg_buffer_destroy(buf);
    hg_executor_destroy(ex);
    printf("hologram %s: consumer ok\n", hg_version());
    return 0;
}
