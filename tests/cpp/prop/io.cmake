# Tests of lockstep_prop_io.
