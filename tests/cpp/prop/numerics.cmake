# Tests of lockstep_prop.
lockstep_add_test_executable(lockstep_prop_tableau_tests TIMEOUT 60
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tableau.cpp LIBS lockstep_prop)
lockstep_add_test_executable(lockstep_prop_stepper_tests TIMEOUT 60
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_stepper.cpp LIBS lockstep_prop)
lockstep_add_test_executable(lockstep_prop_runner_tests TIMEOUT 60
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_runner.cpp ${CMAKE_CURRENT_LIST_DIR}/test_engine_choice.cpp LIBS lockstep_prop)
lockstep_add_test_executable(lockstep_prop_validation_tests TIMEOUT 120
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_validation.cpp LIBS lockstep_prop)
lockstep_add_test_executable(lockstep_prop_dudley_tests TIMEOUT 120
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_dudley.cpp LIBS lockstep_prop)
lockstep_add_test_executable(lockstep_prop_coherence_tests TIMEOUT 1800 LABELS slow
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_coherence.cpp LIBS lockstep_prop)
# The CUDA engine against the CPU engine, and its fused evaluation of N against the cuFFT path
# (label gpu: needs an NVIDIA GPU).
if(_cuda)
  lockstep_add_test_executable(lockstep_prop_cuda_tests TIMEOUT 900 LABELS gpu
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_engine.cpp ${CMAKE_CURRENT_LIST_DIR}/test_cuda_fused_evaluation.cpp
    LIBS lockstep_prop CUDA::cudart CUDA::cufft)
  # Faults: device memory taken on purpose and 1000 failed calls measured by the memory they
  # leave, so nothing else runs beside them.
  lockstep_add_test_executable(lockstep_prop_cuda_fault_tests TIMEOUT 900 LABELS gpu RUN_SERIAL
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cuda_faults.cpp LIBS lockstep_prop CUDA::cudart)
endif()
