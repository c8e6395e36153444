x = ur"abc"
