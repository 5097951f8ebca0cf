# The parity harness's list of public ops without a parity entry (include/hologram/ops.h and the
# op enums): an op added without its parity test fails CI here (docs/contributing.md).
add_test(NAME test_parity_untested COMMAND test_parity)
set_tests_properties(test_parity_untested PROPERTIES ENVIRONMENT
  "HG_PARITY_LIST_UNTESTED=1;HG_SOURCE_DIR=${PROJECT_SOURCE_DIR};HG_BINARY_DIR=${PROJECT_BINARY_DIR}")
