# coding: utf8
# ÿ in a comment, decoded because of the cookie
x = 1
