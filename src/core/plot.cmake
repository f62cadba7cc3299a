# lockstep_plot: PNG figures (src/core/plot.cpp) for the programs that draw them (the lockstep
# CLI); the engines do not link it. zlib compresses the image data; the PNG chunks and the
# bitmap font (src/core/plot_font.hpp) are lockstep's own (docs/ARCHITECTURE.md says why).
find_package(ZLIB REQUIRED)
add_library(lockstep_plot STATIC ${CMAKE_CURRENT_LIST_DIR}/plot.cpp)
target_link_libraries(lockstep_plot PUBLIC lockstep_core PRIVATE ZLIB::ZLIB)
target_link_libraries(lockstep_plot PRIVATE lockstep_warnings)
