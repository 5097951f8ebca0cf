# The CUDA backend's tests: the instruction tests, the example programs, the device op paths and
# the whole parity harness with HG_TEST_BACKEND=cuda, against the same references as on the CPU.
# HG_CUDA_TESTS selects where they run:
#   emulate (default; CI has no GPU): on the host emulation (docs/cuda.md: HOLOGRAM_CUDA_EMULATE=1,
#     the generated CUDA C compiled as host C++), tests named *_cuda_emu. When HOLOGRAM_NVRTC
#     points at libnvrtc (scripts/test.sh sets it from the nvidia-cuda-nvrtc wheel), every
#     emulated kernel is also compiled by NVRTC for sm_90, and test_cuda_codegen compiles the
#     examples, the corpus and random programs for sm_80 and sm_90.
#   device (scripts/gpu_check.sh): on a real GPU, tests named *_cuda, every immediate pick.
# Not under sanitizers: the emulated kernels are separate shared objects the sanitizers do not
# see, and they only add compile time there.
set(HG_CUDA_TESTS "emulate" CACHE STRING "Where the CUDA backend's tests run: emulate or device")
set_property(CACHE HG_CUDA_TESTS PROPERTY STRINGS emulate device)
if(NOT HG_CUDA_TESTS MATCHES "^(emulate|device)$")
  message(FATAL_ERROR "HG_CUDA_TESTS must be 'emulate' or 'device', got '${HG_CUDA_TESTS}'")
endif()
set_tests_properties(test_cuda_codegen test_backend_examples test_device_ops test_ops_grad test_optim test_async PROPERTIES
  SKIP_RETURN_CODE 77)
if(HG_SAN)
  # NVRTC is not built for the sanitizers (its allocations look like leaks to LeakSanitizer):
  # under them only the generated source is checked.
  set_tests_properties(test_cuda_codegen PROPERTIES ENVIRONMENT
    "HOLOGRAM_NVRTC=/nonexistent/not-under-sanitizers;HG_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
else()
  set(HG_CUDA_ENV
    "HG_TEST_BACKEND=cuda"
    "HOLOGRAM_CACHE_DIR=${PROJECT_BINARY_DIR}/cuda-kernel-cache"
    "HG_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "HG_BINARY_DIR=${PROJECT_BINARY_DIR}")
  if(HG_CUDA_TESTS STREQUAL "emulate")
    set(HG_CUDA_SUFFIX _cuda_emu)
    list(APPEND HG_CUDA_ENV "HOLOGRAM_CUDA_EMULATE=1" "HG_TEST_IMM_PICKS=1")
  else()
    set(HG_CUDA_SUFFIX _cuda)
  endif()
  foreach(t test_instructions_arith test_instructions_cmp test_instructions_cvt
            test_instructions_math test_instructions_memory test_instructions_atomics
            test_instructions_sreg test_instructions_shfl test_instructions_vector
            test_ops_rows_shapes test_ops_rows_bw_shapes test_backend_examples test_device_ops
            test_composite test_composite_optim test_graph_views test_composite_norm_stats
            test_ops_grad test_optim test_async test_ops_overlap test_ops_dropout test_attention)
    add_test(NAME ${t}${HG_CUDA_SUFFIX} COMMAND ${t})
    set_tests_properties(${t}${HG_CUDA_SUFFIX} PROPERTIES ENVIRONMENT "${HG_CUDA_ENV}"
      TIMEOUT 2400 SKIP_RETURN_CODE 77 LABELS cuda${HG_CUDA_SUFFIX})
  endforeach()
  add_test(NAME test_parity${HG_CUDA_SUFFIX} COMMAND test_parity)
  set_tests_properties(test_parity${HG_CUDA_SUFFIX} PROPERTIES
    ENVIRONMENT "${HG_CUDA_ENV};HG_PARITY_BACKENDS=cuda"
    TIMEOUT 2400 LABELS cuda${HG_CUDA_SUFFIX})
endif()
