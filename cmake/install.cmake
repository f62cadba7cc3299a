# The installed package: headers, the engines' static libraries and a CMake package, so that a
# C++ project writes find_package(lockstep) and links lockstep::qkan or lockstep::prop
# (tests/consumer builds one against the installed tree).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(_lockstep_exported lockstep_core lockstep)
set_target_properties(lockstep_core PROPERTIES EXPORT_NAME core)
set_target_properties(lockstep PROPERTIES EXPORT_NAME qkan)
if(LOCKSTEP_PROP)
  list(APPEND _lockstep_exported lockstep_prop lockstep_prop_io)
  set_target_properties(lockstep_prop PROPERTIES EXPORT_NAME prop)
  set_target_properties(lockstep_prop_io PROPERTIES EXPORT_NAME prop_io)
endif()
install(TARGETS ${_lockstep_exported} EXPORT lockstepTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development)
install(DIRECTORY include/lockstep DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
set(_lockstep_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/lockstep)
install(EXPORT lockstepTargets NAMESPACE lockstep:: DESTINATION ${_lockstep_cmake_dir} COMPONENT development)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/lockstepConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/lockstepConfig.cmake INSTALL_DESTINATION ${_lockstep_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lockstepConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lockstepConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/lockstepConfigVersion.cmake
  DESTINATION ${_lockstep_cmake_dir} COMPONENT development)
