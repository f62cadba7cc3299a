# Figures of QKAN fits in lockstep (src/qkan/plots.cpp), drawn by lockstep_core's plot module.
target_sources(lockstep PRIVATE ${CMAKE_CURRENT_LIST_DIR}/plots.cpp)
