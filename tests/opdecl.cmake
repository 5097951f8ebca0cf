# The op declarations (tools/opdecl/ops_decl.py) against every surface they generate or check:
# the public header's prototypes, the Python bindings, ops.py, the stubs and the docs tables.
find_package(Python3 3.9 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  add_test(NAME op_decl_check COMMAND ${Python3_EXECUTABLE}
    ${PROJECT_SOURCE_DIR}/tools/opdecl/gen_ops.py --check)
endif()
