# Fuzzing of the Atlas ISA text parser / binary loader (tests/fuzz/fuzz_isa.c).
#
# Every build: fuzz_isa_replay runs the fuzz target over the committed seed corpus
# (tests/fuzz/corpus) and over the validator's malformed programs (tests/corpus/invalid).
#
# libFuzzer (Clang only):
#   CC=clang cmake -S . -B build-fuzz -DHG_FUZZ=ON -DHG_SANITIZE=ON
#   cmake --build build-fuzz --target fuzz_isa
#   build-fuzz/tests/fuzz_isa -max_total_time=120 tests/fuzz/corpus   (use a copy to keep it clean)
add_executable(fuzz_isa_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_isa.c
  ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
target_include_directories(fuzz_isa_replay PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
  ${PROJECT_SOURCE_DIR}/tests/common)
target_compile_options(fuzz_isa_replay PRIVATE ${HG_WARN})
target_compile_definitions(fuzz_isa_replay PRIVATE _GNU_SOURCE)
if(TARGET hg_test_common)
  target_link_libraries(fuzz_isa_replay PRIVATE hg_test_common)
endif()
target_link_libraries(fuzz_isa_replay PRIVATE hologram_static m)
add_test(NAME fuzz_isa_replay COMMAND fuzz_isa_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus)
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/corpus/invalid)
  add_test(NAME fuzz_isa_replay_invalid COMMAND fuzz_isa_replay ${PROJECT_SOURCE_DIR}/tests/corpus/invalid)
endif()

option(HG_FUZZ "Build the libFuzzer target fuzz_isa (Clang only)" OFF)
if(HG_FUZZ)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    # Coverage instrumentation for the library code the fuzzer explores.
    foreach(t hg_objects hg_simd_generic hg_simd_avx2)
      if(TARGET ${t})
        target_compile_options(${t} PRIVATE -fsanitize=fuzzer-no-link)
      endif()
    endforeach()
    add_executable(fuzz_isa ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_isa.c)
    target_include_directories(fuzz_isa PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
    target_compile_options(fuzz_isa PRIVATE ${HG_WARN} -fsanitize=fuzzer,address)
    target_link_options(fuzz_isa PRIVATE -fsanitize=fuzzer,address)
    target_compile_definitions(fuzz_isa PRIVATE _GNU_SOURCE)
    target_link_libraries(fuzz_isa PRIVATE hologram_static m)
  else()
    message(WARNING "HG_FUZZ needs Clang (libFuzzer); ${CMAKE_C_COMPILER_ID} found: fuzz_isa not built")
  endif()
endif()
