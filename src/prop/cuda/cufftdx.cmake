# The CUDA engine's fused evaluation of N (fused_evaluation.cu) over cuFFTDx, the header-only
# device FFT library of NVIDIA MathDx. Found, in this order:
#   - NVIDIA's MathDx release through its CMake package: find_package(mathdx) with its folder in
#     CMAKE_PREFIX_PATH or mathdx_ROOT;
#   - the headers under LOCKSTEP_MATHDX_ROOT, the folder holding include/cufftdx.hpp and
#     external/cutlass/include: for PyPI's nvidia-mathdx (which scripts/setup_python_env.sh
#     installs into the project venv), the folder that
#       python -c "import nvidia.mathdx as m; print(m.__path__[0])"
#     prints (scripts/test.sh passes it).
# Its transforms are generated per architecture, and fused_evaluation.cu asks for sm_90's: it is
# compiled on its own for sm_90, whatever CMAKE_CUDA_ARCHITECTURES lists, and the engine takes
# it only on a device of compute capability 9.0 (cuda_fused_evaluation_available); elsewhere, or
# without cuFFTDx (fused_evaluation_unavailable.cpp), the engine has the cuFFT path alone.
set(LOCKSTEP_MATHDX_ROOT "" CACHE PATH "NVIDIA MathDx: the folder holding include/cufftdx.hpp")
set(_cufftdx_includes "")
find_package(mathdx CONFIG QUIET COMPONENTS cufftdx)
if(mathdx_FOUND AND TARGET mathdx::cufftdx)
  get_target_property(_cufftdx_includes mathdx::cufftdx INTERFACE_INCLUDE_DIRECTORIES)
  set(_cufftdx_from "the mathdx CMake package (${mathdx_DIR})")
elseif(LOCKSTEP_MATHDX_ROOT)
  find_path(LOCKSTEP_CUFFTDX_INCLUDE cufftdx.hpp HINTS ${LOCKSTEP_MATHDX_ROOT} PATH_SUFFIXES include NO_DEFAULT_PATH)
  find_path(LOCKSTEP_MATHDX_CUTLASS_INCLUDE cutlass/numeric_types.h
    HINTS ${LOCKSTEP_MATHDX_ROOT} PATH_SUFFIXES external/cutlass/include NO_DEFAULT_PATH)
  if(LOCKSTEP_CUFFTDX_INCLUDE AND LOCKSTEP_MATHDX_CUTLASS_INCLUDE)
    set(_cufftdx_includes ${LOCKSTEP_CUFFTDX_INCLUDE} ${LOCKSTEP_MATHDX_CUTLASS_INCLUDE})
    set(_cufftdx_from "LOCKSTEP_MATHDX_ROOT (${LOCKSTEP_MATHDX_ROOT})")
  endif()
endif()
if(_cufftdx_includes)
  add_library(lockstep_prop_fused OBJECT ${CMAKE_CURRENT_LIST_DIR}/fused_evaluation.cu)
  set_target_properties(lockstep_prop_fused PROPERTIES CUDA_ARCHITECTURES 90-real POSITION_INDEPENDENT_CODE ON)
  target_include_directories(lockstep_prop_fused PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  target_include_directories(lockstep_prop_fused SYSTEM PRIVATE ${_cufftdx_includes})
  target_sources(lockstep_prop PRIVATE $<TARGET_OBJECTS:lockstep_prop_fused>)
  message(STATUS "lockstep: the CUDA engine's fused evaluation of N (sm_90) with cuFFTDx from ${_cufftdx_from}")
else()
  target_sources(lockstep_prop PRIVATE ${CMAKE_CURRENT_LIST_DIR}/fused_evaluation_unavailable.cpp)
  message(STATUS "lockstep: no fused evaluation of N (needs cuFFTDx: the mathdx CMake package or LOCKSTEP_MATHDX_ROOT)")
endif()
