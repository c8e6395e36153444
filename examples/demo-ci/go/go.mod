module example.com/democi

go 1.19
