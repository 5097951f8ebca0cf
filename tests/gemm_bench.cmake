# SGEMM benchmark program (not a test): build/hg_gemm_bench, driven by bench/gemm_peers.py.
add_executable(hg_gemm_bench ${PROJECT_SOURCE_DIR}/bench/gemm_bench.c)
target_include_directories(hg_gemm_bench PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
target_compile_options(hg_gemm_bench PRIVATE ${HG_WARN} ${HG_RELEASE_OPT})
target_compile_definitions(hg_gemm_bench PRIVATE _GNU_SOURCE)
target_link_libraries(hg_gemm_bench PRIVATE hologram_static m)
set_target_properties(hg_gemm_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
