"""The sandbox's one writable place, /tmp, emptied after every spare.

/tmp is a sized tmpfs of the whole sandbox, which serves many candidates in turn. What one
candidate leaves there would reach the next one: its files (a message, precomputed outputs, a
module to plant) and its size (the next candidate, finding the tmpfs full, fails for a reason
that is not its own). So the warm-spare parent gives each spare its own directory and, when it
reaps a spare, deletes everything in /tmp but the directories of spares still alive.
"""
import os
import shutil
import stat

ROOT = "/tmp"


def spare_directory(serial, root=ROOT):
    """A fresh private directory for spare `serial` (made before the fork, so the wipe knows it
    belongs to a live spare)."""
    path = os.path.join(root, f"spare-{int(serial)}")
    os.mkdir(path, 0o700)
    return path


def _make_removable(function, path, _exc_info):
    # A candidate may have made a directory of its own unreadable or unwritable (chmod 0);
    # it is the parent's uid's, so the parent can give itself the rights back.
    parent = os.path.dirname(path)
    for target in (parent, path):
        try:
            if not os.path.islink(target):
                os.chmod(target, stat.S_IRWXU)
        except OSError:
            pass
    function(path)


def wipe(keep=(), root=ROOT):
    """Deletes every entry of `root` except the paths in `keep`. Returns "" when `root` holds
    nothing else afterwards, else what is left (the caller reports it: the judge then replaces
    the sandbox rather than hand a later candidate what an earlier one left)."""
    keep = {os.path.join(root, os.path.basename(p)) for p in keep}
    # A mount point there is the sandbox's own (bwrap made it, read-only), not a candidate's.
    keep |= {os.path.join(root, name) for name in os.listdir(root)
             if os.path.ismount(os.path.join(root, name))}
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if path in keep:
            continue
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                try:
                    shutil.rmtree(path, onerror=_make_removable)
                except OSError:
                    os.chmod(path, stat.S_IRWXU)
                    shutil.rmtree(path, onerror=_make_removable)
            else:
                os.unlink(path)
        except OSError:
            pass  # reported below
    left = sorted(set(os.listdir(root)) - {os.path.basename(p) for p in keep})
    return "" if not left else f"{len(left)} entries of {root} could not be removed: " \
        f"{', '.join(left[:5])}"
