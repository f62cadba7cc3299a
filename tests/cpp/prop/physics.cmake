# Tests of the physics building blocks of lockstep_prop.
