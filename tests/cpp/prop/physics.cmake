# Tests of the physics building blocks of lockstep_prop.
lockstep_add_test_executable(lockstep_prop_physics_tests TIMEOUT 120
  SOURCES
    test_physics_linear.cpp
    test_physics_raman.cpp
    test_physics_nonlinear.cpp
    test_physics_pulse.cpp
    test_physics_measures.cpp
  LIBS lockstep_prop)
