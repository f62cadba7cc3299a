# Figures of QKAN fits in lockstep.
