def workload(x, gate, up, down)
    return x
