# The README's C quickstart is compiled and run as a test.
string(REPLACE ";" " " HG_SAN_FLAGS "${HG_SAN}")
add_test(NAME readme_quickstart COMMAND ${PROJECT_SOURCE_DIR}/tests/scripts/readme_quickstart.sh
  ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER} "${HG_SAN_FLAGS}")
