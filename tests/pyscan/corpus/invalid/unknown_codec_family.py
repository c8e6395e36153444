# coding: mac2
x = 1
