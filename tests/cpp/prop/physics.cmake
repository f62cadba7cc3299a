# Tests of the physics building blocks of lockstep_prop.
lockstep_add_test_executable(lockstep_prop_physics_tests TIMEOUT 120
  SOURCES
    test_physics_linear.cpp
    test_physics_raman.cpp
    test_physics_nonlinear.cpp
    test_physics_pulse.cpp
    test_physics_measures.cpp
  LIBS lockstep_prop)
# Gases (equation of state against CoolProp's values in tests/data, index, Kerr) and hollow
# capillaries (HE11 mode, effective area, pressure profiles).
lockstep_add_test_executable(lockstep_prop_gas_tests TIMEOUT 60
  SOURCES test_gas.cpp LIBS lockstep_prop)
target_compile_definitions(lockstep_prop_gas_tests PRIVATE LOCKSTEP_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data")
# The guide calculator (β1 … β6, ZDW, γ, soliton order, RDW) against closed forms, Cauchy's
# integral formula and Luna.jl's symbolic values.
lockstep_add_test_executable(lockstep_prop_guide_tests TIMEOUT 60
  SOURCES test_guide.cpp LIBS lockstep_prop)
# Gas-filled capillaries in the propagation: the linear operator and γ against the mode, linear
# propagation, launches by energy, an adaptive run in helium, scans of capillary keys as batches.
lockstep_add_test_executable(lockstep_prop_capillary_tests TIMEOUT 120
  SOURCES test_capillary.cpp LIBS lockstep_prop_io)
target_compile_definitions(lockstep_prop_capillary_tests PRIVATE LOCKSTEP_EXAMPLES="${PROJECT_SOURCE_DIR}/examples")
