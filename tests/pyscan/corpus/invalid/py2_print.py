def test_a():
    print "hello"
