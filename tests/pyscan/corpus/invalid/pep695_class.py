class A[T]:
    pass
