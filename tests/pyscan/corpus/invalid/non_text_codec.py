# coding: base64
x = 1
