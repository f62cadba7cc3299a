# Tests of the PNG figures: lockstep_plot_tests (ticks, colour maps, PNG encoding checked by a
# strict reader of its own (png_decode.hpp), drawing, the QKAN fit figure) and, with the
# propagation engine, lockstep_prop_plot_tests (the figures of propagation results).
lockstep_add_test_executable(lockstep_plot_tests TIMEOUT 60 SOURCES test_plot.cpp LIBS lockstep_qkan_plots ZLIB::ZLIB)

if(LOCKSTEP_PROP)
  lockstep_add_test_executable(lockstep_prop_plot_tests TIMEOUT 60
    SOURCES test_prop_plots.cpp LIBS lockstep_prop_plots ZLIB::ZLIB)
endif()
