# scripts/gpu_check.sh (the one command of the GPU check, docs/cuda.md): its argument handling,
# skipped steps and summary files, without a GPU.
add_test(NAME gpu_check_script COMMAND ${PROJECT_SOURCE_DIR}/tests/scripts/gpu_check_script.sh
  ${PROJECT_SOURCE_DIR})
set_tests_properties(gpu_check_script PROPERTIES TIMEOUT 120)
