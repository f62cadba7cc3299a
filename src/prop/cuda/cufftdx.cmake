# The CUDA engine's fused evaluation of N (fused_evaluation.cu) over cuFFTDx, the header-only
# device FFT library of NVIDIA MathDx (PyPI: nvidia-mathdx, which scripts/setup_python_env.sh
# installs into the project venv). Found under LOCKSTEP_MATHDX_ROOT, else in that venv. Its
# transforms are generated per architecture, and fused_evaluation.cu asks for sm_90's: built
# only when sm_90 is the one architecture compiled for. Otherwise the engine has the cuFFT path
# alone (fused_evaluation_unavailable.cpp).
set(LOCKSTEP_MATHDX_ROOT "" CACHE PATH "NVIDIA MathDx: the folder holding include/cufftdx.hpp")
file(GLOB _lockstep_venv_mathdx "${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/mathdx")
find_path(LOCKSTEP_CUFFTDX_INCLUDE cufftdx.hpp
  HINTS ${LOCKSTEP_MATHDX_ROOT} ${_lockstep_venv_mathdx} PATH_SUFFIXES include NO_DEFAULT_PATH)
find_path(LOCKSTEP_MATHDX_CUTLASS_INCLUDE cutlass/numeric_types.h
  HINTS ${LOCKSTEP_MATHDX_ROOT} ${_lockstep_venv_mathdx} PATH_SUFFIXES external/cutlass/include NO_DEFAULT_PATH)
if(LOCKSTEP_CUFFTDX_INCLUDE AND LOCKSTEP_MATHDX_CUTLASS_INCLUDE AND CMAKE_CUDA_ARCHITECTURES MATCHES "^90a?$")
  target_sources(lockstep_prop PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fused_evaluation.cu)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/fused_evaluation.cu PROPERTIES COMPILE_OPTIONS
    "-isystem;${LOCKSTEP_CUFFTDX_INCLUDE};-isystem;${LOCKSTEP_MATHDX_CUTLASS_INCLUDE}")
  message(STATUS "lockstep: the CUDA engine's fused evaluation of N with cuFFTDx (${LOCKSTEP_CUFFTDX_INCLUDE})")
else()
  target_sources(lockstep_prop PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fused_evaluation_unavailable.cpp)
  message(STATUS "lockstep: no fused evaluation of N (needs cuFFTDx, LOCKSTEP_MATHDX_ROOT, and "
                 "CMAKE_CUDA_ARCHITECTURES 90 or 90a; now '${CMAKE_CUDA_ARCHITECTURES}')")
endif()
