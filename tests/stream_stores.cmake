# The CPU backend's streaming-store path (non-temporal stores for outputs of at least
# HOLOGRAM_STREAM_STORES bytes, by default the last-level cache, at most 32 MiB) is taken by the
# test suite's small arrays only when forced: these tests run again with a 1-byte threshold, so
# every strip-mined store streams and its results are checked bit for bit as in the plain runs.
foreach(t test_cpu_fastpaths test_ops_elementwise test_ops_elementwise_layout test_ops_elementwise_api
    test_graph test_graph_norm test_parity)
  if(TARGET ${t})
    add_test(NAME ${t}_stream_stores COMMAND ${t})
    set_tests_properties(${t}_stream_stores PROPERTIES
      ENVIRONMENT "HG_SOURCE_DIR=${PROJECT_SOURCE_DIR};HG_BINARY_DIR=${PROJECT_BINARY_DIR};HOLOGRAM_STREAM_STORES=1"
      TIMEOUT 600)
  endif()
endforeach()
