# Tests of the PNG figures.
