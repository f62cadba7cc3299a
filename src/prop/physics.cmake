# Physics of lockstep_prop: fibre, pulses, responses, noise, windows, the nonlinear operator.
