# PNG figures in lockstep_core (src/core/plot.cpp): zlib compresses the image data; the PNG
# chunks and the bitmap font (src/core/plot_font.hpp) are lockstep's own.
find_package(ZLIB REQUIRED)
target_sources(lockstep_core PRIVATE ${CMAKE_CURRENT_LIST_DIR}/plot.cpp)
target_link_libraries(lockstep_core PRIVATE ZLIB::ZLIB)
