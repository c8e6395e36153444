try:
    pass
except ValueError, e:
    pass
