# lockstep_prop_plots: figures of propagation results (src/prop/plots.cpp), drawn with
# lockstep_plot.
add_library(lockstep_prop_plots STATIC ${CMAKE_CURRENT_LIST_DIR}/plots.cpp)
target_link_libraries(lockstep_prop_plots PUBLIC lockstep_prop lockstep_plot)
target_link_libraries(lockstep_prop_plots PRIVATE lockstep_warnings)
