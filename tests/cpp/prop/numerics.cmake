# Tests of lockstep_prop.
