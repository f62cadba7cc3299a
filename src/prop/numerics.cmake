# lockstep_prop: the numerics of the propagation engine.
add_library(lockstep_prop STATIC
  grid.cpp
  tableau.cpp
  controller.cpp
  stage_plan.cpp
  stepper.cpp
  schedule.cpp
  member.cpp
  runner.cpp
  host_engine.cpp
  physics_problem.cpp
)
target_link_libraries(lockstep_prop PUBLIC lockstep_core)
# The CUDA engine (cuda/engine.cpp over cuFFT and the kernels of cuda/kernels.cu), or its stub without CUDA.
if(_cuda)
  target_sources(lockstep_prop PRIVATE cuda/engine.cpp cuda/kernels.cu)
  target_link_libraries(lockstep_prop PRIVATE CUDA::cudart CUDA::cufft)
  target_include_directories(lockstep_prop PRIVATE ${PROJECT_SOURCE_DIR})  # src/core/cuda/runtime.hpp
  include(${CMAKE_CURRENT_LIST_DIR}/cuda/cufftdx.cmake)
else()
  target_sources(lockstep_prop PRIVATE cuda/no_cuda.cpp)
endif()
target_compile_options(lockstep_prop PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>>)

# bench/prop_cpu.cpp: the CPU benchmark of the runners (not built by default:
# `cmake --build <dir> --target lockstep_prop_cpu_bench`).
add_executable(lockstep_prop_cpu_bench EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/bench/prop_cpu.cpp)
target_link_libraries(lockstep_prop_cpu_bench PRIVATE lockstep_prop)
target_compile_options(lockstep_prop_cpu_bench PRIVATE -Wall -Wextra)

# bench/prop_cuda.cpp: the CUDA benchmark of the engine against its FFT floor (not built by
# default: `cmake --build <dir> --target lockstep_prop_cuda_bench`).
if(_cuda)
  add_executable(lockstep_prop_cuda_bench EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/bench/prop_cuda.cpp)
  target_link_libraries(lockstep_prop_cuda_bench PRIVATE lockstep_prop CUDA::cudart CUDA::cufft)
  target_include_directories(lockstep_prop_cuda_bench PRIVATE ${PROJECT_SOURCE_DIR})  # src/prop/cuda/fft_plan.hpp
  target_compile_options(lockstep_prop_cuda_bench PRIVATE -Wall -Wextra)
endif()
