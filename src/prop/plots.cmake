# Figures of propagation results in lockstep_prop (src/prop/plots.cpp), drawn by lockstep_core's
# plot module.
target_sources(lockstep_prop PRIVATE ${CMAKE_CURRENT_LIST_DIR}/plots.cpp)
