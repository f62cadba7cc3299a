# Figures of propagation results in lockstep_prop.
