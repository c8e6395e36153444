# coding: no-such-codec
x = 1
