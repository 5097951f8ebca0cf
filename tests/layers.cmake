# The layers of src/ (docs/architecture.md) checked on every include and call: nothing uses a layer
# above its own, backend implementations are private, op families use one another only as listed.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME check_layers COMMAND ${Python3_EXECUTABLE}
    ${PROJECT_SOURCE_DIR}/tests/scripts/check_layers.py ${PROJECT_SOURCE_DIR}/src)
  # The call rules on a small tree with known violations (the check can fail).
  add_test(NAME check_layers_selftest COMMAND ${Python3_EXECUTABLE}
    ${PROJECT_SOURCE_DIR}/tests/scripts/check_layers_selftest.py)
endif()
