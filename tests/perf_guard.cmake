# The instruction-count guard (docs/testing.md "Instruction-count guard"): tests/perf_guard/
# perf_guard.c runs a fixed set of calls under callgrind and tests/perf_guard/perf_guard.py
# compares their instruction counts with tests/perf_guard/counts.json. It needs valgrind's
# client-request header to build and valgrind to run; the test is skipped (exit 77) without
# valgrind or on a toolchain other than the one the counts were stored for.
include(CheckIncludeFile)
check_include_file(valgrind/callgrind.h HG_HAVE_CALLGRIND_H)
find_package(Python3 COMPONENTS Interpreter QUIET)
if(HG_HAVE_CALLGRIND_H)
  add_executable(perf_guard ${CMAKE_CURRENT_SOURCE_DIR}/perf_guard/perf_guard.c)
  target_include_directories(perf_guard PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(perf_guard PRIVATE ${HG_WARN} ${HG_RELEASE_OPT})
  target_link_libraries(perf_guard PRIVATE hologram_static m)
  if(Python3_Interpreter_FOUND)
    add_test(NAME perf_guard COMMAND ${Python3_EXECUTABLE}
      ${CMAKE_CURRENT_SOURCE_DIR}/perf_guard/perf_guard.py c $<TARGET_FILE:perf_guard>)
    set_tests_properties(perf_guard PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS perf)
  endif()
elseif(Python3_Interpreter_FOUND)
  # Says why it is skipped (ctest shows the test as skipped, its output the reason).
  add_test(NAME perf_guard COMMAND ${Python3_EXECUTABLE}
    ${CMAKE_CURRENT_SOURCE_DIR}/perf_guard/perf_guard.py skip
    "valgrind/callgrind.h not found at configure time (install valgrind)")
  set_tests_properties(perf_guard PROPERTIES SKIP_RETURN_CODE 77 LABELS perf)
endif()
