# Fuzz targets (docs/testing.md, "Fuzzing"):
#   fuzz_isa    the Atlas ISA text parser / printer, binary loader and validator (tests/fuzz/fuzz_isa.c)
#   fuzz_graph  the graph compiler: canonicalizer rewrite rules, folding, CSE/DCE, fusion and
#               lowering, against the eager ops evaluated node by node (tests/fuzz/fuzz_graph.c)
#
# Every build: fuzz_isa_replay runs fuzz_isa over the committed seed corpus (tests/fuzz/corpus)
# and over the validator's malformed programs (tests/corpus/invalid); fuzz_graph_replay runs
# fuzz_graph over tests/fuzz/corpus_graph. Both replays use tests/fuzz/replay_main.c.
#
# libFuzzer (Clang only):
#   CC=clang cmake -S . -B build-fuzz -DHG_FUZZ=ON -DHG_SANITIZE=ON
#   cmake --build build-fuzz --target fuzz_isa fuzz_graph
#   build-fuzz/tests/fuzz_isa -max_total_time=120 tests/fuzz/corpus   (use a copy to keep it clean)
#   build-fuzz/tests/fuzz_graph -max_total_time=600 corpus_graph_copy
function(hg_fuzz_replay name)
  add_executable(${name}_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.c
    ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.c)
  target_include_directories(${name}_replay PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
    ${PROJECT_SOURCE_DIR}/tests/common)
  target_compile_options(${name}_replay PRIVATE ${HG_WARN})
  target_compile_definitions(${name}_replay PRIVATE _GNU_SOURCE)
  # hg_test_common: tensor_ref's view reader and NaN test (fuzz_graph)
  target_link_libraries(${name}_replay PRIVATE hg_test_common hologram_static m)
endfunction()

hg_fuzz_replay(fuzz_isa)
add_test(NAME fuzz_isa_replay COMMAND fuzz_isa_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus)
if(EXISTS ${PROJECT_SOURCE_DIR}/tests/corpus/invalid)
  add_test(NAME fuzz_isa_replay_invalid COMMAND fuzz_isa_replay ${PROJECT_SOURCE_DIR}/tests/corpus/invalid)
endif()
hg_fuzz_replay(fuzz_graph)
add_test(NAME fuzz_graph_replay COMMAND fuzz_graph_replay ${PROJECT_SOURCE_DIR}/tests/fuzz/corpus_graph)

option(HG_FUZZ "Build the libFuzzer targets fuzz_isa and fuzz_graph (Clang only)" OFF)
if(HG_FUZZ)
  if(CMAKE_C_COMPILER_ID MATCHES "Clang")
    # Coverage instrumentation for the library code the fuzzers explore.
    foreach(t hg_objects hg_simd_generic hg_simd_avx2 hg_simd_avx512)
      if(TARGET ${t})
        target_compile_options(${t} PRIVATE -fsanitize=fuzzer-no-link)
      endif()
    endforeach()
    foreach(name fuzz_isa fuzz_graph)
      add_executable(${name} ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.c)
      target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src
        ${PROJECT_SOURCE_DIR}/tests/common)
      target_compile_options(${name} PRIVATE ${HG_WARN} -fsanitize=fuzzer,address)
      target_link_options(${name} PRIVATE -fsanitize=fuzzer,address)
      target_compile_definitions(${name} PRIVATE _GNU_SOURCE)
      target_link_libraries(${name} PRIVATE hg_test_common hologram_static m)
    endforeach()
  else()
    message(WARNING "HG_FUZZ needs Clang (libFuzzer); ${CMAKE_C_COMPILER_ID} found: fuzz_isa and fuzz_graph not built")
  endif()
endif()
