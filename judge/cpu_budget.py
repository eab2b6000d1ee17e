"""When a long-lived process should leave between jobs: RLIMIT_CPU counts its whole life, so the
judge and its compile process exit cleanly once they have used RECYCLE_FRACTION of the soft
limit, and the limit never lands in the middle of an innocent candidate's evaluation.
"""
import resource

RECYCLE_FRACTION = 0.5


def cpu_seconds_used():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def should_recycle():
    soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
    return soft != resource.RLIM_INFINITY and cpu_seconds_used() >= RECYCLE_FRACTION * soft
