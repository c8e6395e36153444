"""Filler tests for the polluter demos: each passes whatever ran before it."""


def make_tests(ns, prefix, count):
    """Put count passing tests named prefix_00, prefix_01, ... into ns."""
    def make(i):
        def test():
            assert i >= 0
        return test
    for i in range(count):
        ns["%s_%02d" % (prefix, i)] = make(i)
