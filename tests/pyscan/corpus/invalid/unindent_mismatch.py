def f():
    pass
  x = 1
