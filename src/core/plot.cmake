# PNG figures in lockstep_core (src/core/plot.cpp).
