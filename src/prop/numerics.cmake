# lockstep_prop: the numerics of the propagation engine.
add_library(lockstep_prop STATIC
  grid.cpp
  tableau.cpp
  controller.cpp
  stepper.cpp
  schedule.cpp
  member.cpp
  runner.cpp
  physics_problem.cpp
)
target_link_libraries(lockstep_prop PUBLIC lockstep_core)
target_compile_options(lockstep_prop PRIVATE -Wall -Wextra $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
