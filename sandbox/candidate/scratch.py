"""The sandbox's one writable place, /tmp, emptied after every spare.

/tmp is a sized tmpfs of the whole sandbox, which serves many candidates in turn. What one
candidate leaves there would reach the next one: its files (a message, precomputed outputs, a
module to plant) and its size (the next candidate, finding the tmpfs full, fails for a reason
that is not its own). So the warm-spare parent gives each spare its own directory and, when it
reaps a spare, deletes everything in /tmp but the directories of spares still alive. When the
spares run as another uid (identity.py), both happen with the parent's filesystem uid set to
theirs: the directory is the spare's own, and the wipe may remove whatever a spare wrote.
"""
import os
import secrets
import shutil
import stat

from . import identity

ROOT = "/tmp"


def spare_directory(serial, spare_id=None, root=ROOT):
    """A fresh private directory for spare `serial`, owned by the spares' uid `spare_id` (None:
    the parent's). Made before the fork, so the wipe knows it belongs to a live spare. The name
    carries random bits: a live spare that could guess the next one's name could make it first,
    and the parent would then have to give up the sandbox."""
    path = os.path.join(root, f"spare-{int(serial)}-{secrets.token_hex(8)}")
    with identity.files_as(spare_id):
        os.mkdir(path, 0o700)
    return path


def _make_removable(function, path, exc_info):
    # A candidate may have made a directory of its own unreadable or unwritable (chmod 0); the
    # wipe runs as its uid (the spares' filesystem uid, identity.files_as), so it can give
    # itself the rights back.
    opened = False
    for target in (os.path.dirname(path), path):
        try:
            if not os.path.islink(target):
                os.chmod(target, stat.S_IRWXU)
                opened = target == path
        except OSError:
            pass
    if function not in (os.open, os.scandir):
        function(path)
    elif opened:
        # A directory that could not be opened (os.open needs flags, so it cannot simply be
        # called again): now that it can, remove it whole, however deep the locked ones go.
        shutil.rmtree(path, onerror=_make_removable)
    else:
        raise exc_info[1]


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


def wipe_as(spare_id, keep=(), root=ROOT):
    """wipe() as the spares' uid `spare_id` (everything they wrote), then, if something is left,
    as the parent's (anything of its own). Returns what is left after both, as wipe()."""
    if spare_id is None:
        return wipe(keep=keep, root=root)
    try:
        with identity.files_as(spare_id):
            left = wipe(keep=keep, root=root)
    except OSError as exc:
        return f"the parent cannot take the spares' filesystem uid: {exc}"
    return wipe(keep=keep, root=root) if left else ""
