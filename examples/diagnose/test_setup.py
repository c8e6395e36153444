"""ORDER_DEPENDENT the other way round: test_login_user relies on the user
that test_create_user leaves behind and never creates its own, so it fails
whenever the random order runs it first."""
_users = {}


def test_create_user():
    _users["alice"] = {"password": "s3cret"}
    assert _users["alice"]["password"] == "s3cret"


def test_login_user():
    assert "alice" in _users, "no such user: alice"
    assert _users["alice"]["password"] == "s3cret"
