# The kernels that run on narrower CPUs (Zen 3: AVX2; the x86-64 baseline) are tested on this
# one too: these tests run again with HOLOGRAM_CPU_LEVEL capping the level, so the AVX2 and
# baseline builds of the row, reduction, GEMM, elementwise and Philox (random, dropout) kernels
# are checked against the same references (and the bit-for-bit checks between paths hold at
# each level).
foreach(level avx2 generic)
  foreach(t test_ops_softmax_norm test_composite_norm_stats test_ops_reduce test_ops_reduce_large
            test_gemm test_ops_matmul
            test_ops_elementwise test_parity test_ops_dropout test_ops_random)
    if(TARGET ${t})
      add_test(NAME ${t}_${level} COMMAND ${t})
      set_tests_properties(${t}_${level} PROPERTIES
        ENVIRONMENT "HG_SOURCE_DIR=${PROJECT_SOURCE_DIR};HG_BINARY_DIR=${PROJECT_BINARY_DIR};HOLOGRAM_CPU_LEVEL=${level}"
        TIMEOUT 600)
    endif()
  endforeach()
endforeach()
