"""ORDER_DEPENDENT: test_warm_cache leaves an entry behind that
test_fresh_cache does not expect; which one runs first is up to the
random order."""
_cache = {}


def test_warm_cache():
    _cache["user"] = "stale"     # never cleaned up: the polluter
    assert _cache["user"] == "stale"


def test_fresh_cache():
    assert "user" not in _cache, "cache not empty: %r" % (_cache,)


def test_cache_size():
    assert len(_cache) <= 1


def test_cache_type():
    assert isinstance(_cache, dict)
