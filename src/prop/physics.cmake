# Physics of lockstep_prop: fibre, pulses, responses, noise, windows, the nonlinear operator,
# gases, hollow capillaries and the guide calculator.
# FFTW3 (double precision) through pkg-config: Debian's libfftw3-dev ships fftw3.pc but no
# usable CMake package. GLOBAL so that the static library's link interface resolves in the
# test and application directories too.
find_package(PkgConfig REQUIRED)
pkg_check_modules(FFTW3 REQUIRED IMPORTED_TARGET GLOBAL fftw3)

target_sources(lockstep_prop PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/spline.cpp
  ${CMAKE_CURRENT_LIST_DIR}/transform.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fftw_wisdom.cpp
  ${CMAKE_CURRENT_LIST_DIR}/physics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nonlinear.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pulse.cpp
  ${CMAKE_CURRENT_LIST_DIR}/measures.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gas.cpp        # gases: equation of state (gas_tables.inc), index, Kerr
  ${CMAKE_CURRENT_LIST_DIR}/capillary.cpp  # the HE11 mode of a hollow capillary, pressure profiles
  ${CMAKE_CURRENT_LIST_DIR}/guide.cpp      # the guide calculator: β1…β6, ZDW, γ, soliton order, RDW
)
target_link_libraries(lockstep_prop PRIVATE PkgConfig::FFTW3)
# FFTW's threads library, for bench/prop_rhs.cpp's comparison of threading strategies only.
find_library(LOCKSTEP_FFTW3_THREADS fftw3_threads HINTS ${FFTW3_LIBRARY_DIRS})
