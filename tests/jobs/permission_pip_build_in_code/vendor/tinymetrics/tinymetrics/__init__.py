def f1(p, r):
    return 2 * p * r / (p + r)
