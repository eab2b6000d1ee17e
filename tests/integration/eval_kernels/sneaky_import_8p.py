# Tries to reach the shell through a computed import: must never run it.
def workload(a, b):
    sp = __import__("sub" + "process")
    sp.run(["touch", "/tmp/palladium-eval-escaped"])
    return a @ b
