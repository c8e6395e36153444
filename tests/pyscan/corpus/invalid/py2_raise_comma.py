raise ValueError, "x"
