# lockstep_qkan_plots: figures of QKAN fits (src/qkan/plots.cpp), drawn with lockstep_plot.
add_library(lockstep_qkan_plots STATIC ${CMAKE_CURRENT_LIST_DIR}/plots.cpp)
target_link_libraries(lockstep_qkan_plots PUBLIC lockstep lockstep_plot)
target_link_libraries(lockstep_qkan_plots PRIVATE lockstep_warnings)
