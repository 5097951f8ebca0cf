// Internal (CPU backend): the CPU's model name ("AMD EPYC"), from /proc/cpuinfo.
#ifndef HG_BACKENDS_CPU_FEATURES_H
#define HG_BACKENDS_CPU_FEATURES_H
const char* hg_cpu_model_name(void);
#endif
