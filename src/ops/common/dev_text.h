// TEMPORARY (issue 13): the ISA-text form of the device kernel helpers, for the dev_*.c files
// not yet moved to the kernel builder. Deleted when the last one is.
#ifndef HG_OPS_COMMON_DEV_TEXT_H
#define HG_OPS_COMMON_DEV_TEXT_H
#include "base/strbuf.h"
#include "ops/common/dev_kernel.h"

const char* hg_dk_dt(hg_dtype t);
void hg_dk_cvt(hg_sb* b, const char* d, hg_dtype dt, const char* s, hg_dtype st);
hg_status hg_dk_launch_text(hg_executor_obj* ex, const char* fn, const hg_sb* text,
                            const hg_launch_config* cfg, const hg_arg* args, size_t nargs);
void hg_dk_param_dims_text(hg_sb* b, const char* prefix, int32_t nd, int nt);
void hg_dk_emit_offsets_text(hg_sb* b, const char* prefix, int32_t nd, int nt, const char* idx,
                             const char* const* offs);
#endif
