# lockstep_prop: the numerics of the propagation engine.
add_library(lockstep_prop STATIC
  grid.cpp
  tableau.cpp
  controller.cpp
  stage_plan.cpp
  stepper.cpp
  exponentials.cpp
  schedule.cpp
  member.cpp
  runner.cpp
  host_engine.cpp
  physics_problem.cpp
)
target_link_libraries(lockstep_prop PUBLIC lockstep_core PRIVATE hwy::hwy hwy::hwy_contrib)
target_include_directories(lockstep_prop PRIVATE ${PROJECT_SOURCE_DIR})  # src/core/hd.hpp, src/core/cuda/runtime.hpp
# The CUDA engine (cuda/engine.cpp over cuFFT and the kernels of cuda/kernels.cu, its tables in
# cuda/device_physics.cpp, its reads in cuda/plane_reader.cpp), or its stub without CUDA.
if(_cuda)
  target_sources(lockstep_prop PRIVATE cuda/engine.cpp cuda/device_physics.cpp cuda/plane_reader.cpp cuda/kernels.cu)
  target_link_libraries(lockstep_prop PRIVATE CUDA::cudart CUDA::cufft)
  include(${CMAKE_CURRENT_LIST_DIR}/cuda/cufftdx.cmake)
else()
  target_sources(lockstep_prop PRIVATE cuda/no_cuda.cpp)
endif()
target_link_libraries(lockstep_prop PRIVATE $<BUILD_INTERFACE:lockstep_warnings>)
add_library(lockstep::prop ALIAS lockstep_prop)
