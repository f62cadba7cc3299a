# Tests of lockstep_prop_io: recipes (units, validation, fuzzing), the configuration hash,
# scans and ensembles, HDF5 result files (round trip, crash safety, fuzzed reader), jobs, the
# guide calculator's text queries (units of pressure, temperature, energy; complex indices).
lockstep_add_test_executable(lockstep_prop_io_tests TIMEOUT 120
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/test_config_hash.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_recipe.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_scan.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_result_file.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_job.cpp
    ${CMAKE_CURRENT_LIST_DIR}/test_guide_text.cpp
  LIBS lockstep_prop_io HDF5::HDF5)  # HDF5: the tests inspect and edit files directly
target_compile_definitions(lockstep_prop_io_tests PRIVATE LOCKSTEP_EXAMPLES="${PROJECT_SOURCE_DIR}/examples"
                                                   LOCKSTEP_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data")
