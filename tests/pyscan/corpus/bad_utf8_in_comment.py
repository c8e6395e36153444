# comment with invalid UTF-8: Â.
def test_comment_bytes():
    assert 1 < 2  # ÿ
