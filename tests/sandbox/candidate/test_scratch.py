"""/tmp of a sandbox is emptied after every spare but for the live spares' directories
(sandbox/candidate/scratch.py)."""
import os
import tempfile

import pytest

from sandbox.candidate import identity, scratch


def test_everything_but_the_live_spares_directories_is_removed(tmp_path):
    root = str(tmp_path)
    live = scratch.spare_directory(2, root=root)
    gone = scratch.spare_directory(1, root=root)
    with open(os.path.join(live, "job"), "w") as handle:
        handle.write("kept")
    with open(os.path.join(root, "planted.py"), "w") as handle:
        handle.write("x = 1")
    os.makedirs(os.path.join(gone, "deep", "er"))
    os.chmod(os.path.join(gone, "deep"), 0)  # a candidate locked its own directory
    os.symlink("/etc/hostname", os.path.join(root, "link"))
    assert scratch.wipe(keep=[live], root=root) == ""
    assert os.listdir(root) == [os.path.basename(live)]
    assert os.listdir(live) == ["job"]
    assert os.path.exists("/etc/hostname")  # a link is removed, never followed


def test_a_spares_directory_cannot_be_made_first_by_guessing_its_name(tmp_path):
    # A live spare that knows the next spare's serial plants that name before the parent does.
    root = str(tmp_path)
    for serial in (1, 2):
        os.mkdir(os.path.join(root, f"spare-{serial}"))
    first = scratch.spare_directory(2, root=root)
    second = scratch.spare_directory(2, root=root)
    assert first != second
    assert os.path.basename(first).startswith("spare-2-")
    assert os.listdir(first) == [] and os.listdir(second) == []


def test_what_cannot_be_removed_is_named(tmp_path, monkeypatch):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "stuck"))
    with open(os.path.join(root, "stuck", "f"), "w"):
        pass
    with open(os.path.join(root, "file"), "w"):
        pass

    def refuse(path, *args, **kwargs):
        raise PermissionError(1, "refused", path)
    monkeypatch.setattr(os, "unlink", refuse)
    left = scratch.wipe(root=root)
    monkeypatch.undo()
    assert left.startswith("2 entries of " + root + " could not be removed: file, stuck"), left


def test_a_mount_point_is_the_sandboxs_own_and_stays(tmp_path, monkeypatch):
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "bound"))
    with open(os.path.join(root, "left"), "w"):
        pass
    real_ismount = os.path.ismount
    monkeypatch.setattr(os.path, "ismount",
                        lambda p: p == os.path.join(root, "bound") or real_ismount(p))
    assert scratch.wipe(root=root) == ""
    assert os.listdir(root) == ["bound"]


def test_the_wipe_as_the_spares_uid_removes_what_a_spare_locked():
    # Root here stands for the parent: under another filesystem uid it loses CAP_DAC_OVERRIDE
    # and CAP_FOWNER, as the parent in its sandbox never had them.
    if os.geteuid() != 0:
        pytest.skip("taking another filesystem uid needs CAP_SETUID")
    spare = 65533
    with tempfile.TemporaryDirectory(dir="/tmp") as root:  # pytest's are closed to others
        os.chmod(root, 0o1777)
        _wipe_what_a_spare_locked(spare, root)


def _wipe_what_a_spare_locked(spare, root):
    live = scratch.spare_directory(2, spare, root=root)
    gone = scratch.spare_directory(1, spare, root=root)
    assert os.stat(gone).st_uid == spare
    with identity.files_as(spare):
        os.makedirs(os.path.join(gone, "deep", "er", "est"))
        os.chmod(os.path.join(gone, "deep", "er", "est"), 0)
        os.chmod(os.path.join(gone, "deep", "er"), 0)
        os.chmod(os.path.join(gone, "deep"), 0)
        with open(os.path.join(root, "stray"), "w"):
            pass
    with open(os.path.join(root, "the-parents"), "w"):  # the parent's own, removed as itself
        pass
    assert scratch.wipe_as(spare, keep=[live], root=root) == ""
    assert os.listdir(root) == [os.path.basename(live)]
