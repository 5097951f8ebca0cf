# The CUDA backend checked without a GPU (docs/cuda.md): the instruction tests, the example
# programs and elementwise op parity run on its host emulation (HOLOGRAM_CUDA_EMULATE=1: the
# generated CUDA C compiled as host C++), against the same references as on the CPU. When
# HOLOGRAM_NVRTC points at libnvrtc (scripts/test.sh sets it from the nvidia-cuda-nvrtc wheel),
# every emulated kernel is also compiled by NVRTC for sm_90, and test_cuda_codegen compiles the
# examples, the corpus and random programs for sm_80 and sm_90. Not under sanitizers: the
# emulated kernels are separate shared objects the sanitizers do not see, and they only add
# compile time there.
set_tests_properties(test_cuda_codegen test_backend_examples test_device_ops PROPERTIES
  SKIP_RETURN_CODE 77)
if(HG_SAN)
  # NVRTC is not built for the sanitizers (its allocations look like leaks to LeakSanitizer):
  # under them only the generated source is checked.
  set_tests_properties(test_cuda_codegen PROPERTIES ENVIRONMENT
    "HOLOGRAM_NVRTC=/nonexistent/not-under-sanitizers;HG_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
else()
  set(HG_CUDA_EMU_ENV
    "HOLOGRAM_CUDA_EMULATE=1"
    "HG_TEST_BACKEND=cuda"
    "HG_TEST_IMM_PICKS=1"
    "HOLOGRAM_CACHE_DIR=${PROJECT_BINARY_DIR}/cuda-kernel-cache"
    "HG_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "HG_BINARY_DIR=${PROJECT_BINARY_DIR}")
  foreach(t test_instructions_arith test_instructions_cmp test_instructions_cvt
            test_instructions_math test_instructions_memory test_instructions_atomics
            test_instructions_sreg test_backend_examples test_device_ops)
    add_test(NAME ${t}_cuda_emu COMMAND ${t})
    set_tests_properties(${t}_cuda_emu PROPERTIES ENVIRONMENT "${HG_CUDA_EMU_ENV}"
      TIMEOUT 2400 SKIP_RETURN_CODE 77 LABELS cuda_emu)
  endforeach()
  add_test(NAME test_parity_cuda_emu COMMAND test_parity)
  set_tests_properties(test_parity_cuda_emu PROPERTIES
    ENVIRONMENT "${HG_CUDA_EMU_ENV};HG_PARITY_BACKENDS=cuda"
    TIMEOUT 2400 LABELS cuda_emu)
endif()
