"""`python -m palladium_candidate`: the warm-spare parent of a candidate sandbox (zygote.py)."""
import sys

from .zygote import main

if __name__ == "__main__":
    sys.exit(main())
