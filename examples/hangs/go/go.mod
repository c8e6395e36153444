module example.com/hangs

go 1.19
