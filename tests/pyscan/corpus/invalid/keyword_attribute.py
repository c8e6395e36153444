x = a.class
