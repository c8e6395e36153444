"""An order-dependent pair for `flakyctl analyze --shuffle` (issue 18).

test_set_currency leaves the module's currency switched to USD; test_total
assumes the default EUR. In file order test_total runs first and passes
every time; shuffled, it fails exactly when test_set_currency ran before
it, about half of the orders. The other tests do not care about order.
"""
SETTINGS = {"currency": "EUR"}


def price(cents):
    return f"{cents / 100:.2f} {SETTINGS['currency']}"


def test_total():
    assert price(1250) == "12.50 EUR"


def test_set_currency():
    SETTINGS["currency"] = "USD"
    assert price(100) == "1.00 USD"


def test_rounding():
    assert round(2.675 * 100) in (267, 268)


def test_zero():
    assert price(0).startswith("0.00")


def test_parse():
    assert int("0042") == 42
