"""/tmp of a sandbox is emptied after every spare but for the live spares' directories
(sandbox/candidate/scratch.py)."""
import os

from sandbox.candidate import scratch


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
    assert sorted(os.listdir(root)) == ["spare-2"]
    assert os.listdir(live) == ["job"]
    assert os.path.exists("/etc/hostname")  # a link is removed, never followed


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
