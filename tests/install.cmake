# Install test: installs this build into a temporary prefix, then builds and runs a small
# consumer against it twice: with find_package(hologram) + hologram::hologram, and with the
# flags from pkg-config (skipped, with a message, when pkg-config is absent).
add_test(NAME install_consumer
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/install/run_install_test.sh
          ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/install/consumer
          ${CMAKE_C_COMPILER} $<CONFIG>)
set_tests_properties(install_consumer PROPERTIES TIMEOUT 600)
