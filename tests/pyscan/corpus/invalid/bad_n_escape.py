x = "\N{BULLET"
