"""The filesystem a measurement was taken on, named from the mount table."""

from __future__ import annotations

from pathlib import Path

from graders.teaching.filesystem import filesystem_of


def test_the_deepest_mount_above_the_folder_is_the_one(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/sda1 / ext4 rw 0 0\n"
                      "tmpfs /dev/shm tmpfs rw 0 0\n"
                      "server:/x /home/my\\040lab nfs rw 0 0\n")
    home = filesystem_of("/home/my lab/workspace", mounts=mounts)
    assert (home.fstype, home.device) == ("nfs", "server:/x")
    assert home.mount_point == Path("/home/my lab")
    assert "nfs filesystem mounted at /home/my lab" in home.describe()
    shm = filesystem_of("/dev/shm/x", mounts=mounts)
    assert shm.in_memory and "lives in RAM" in shm.describe()
    root = filesystem_of("/etc", mounts=mounts)
    assert root.fstype == "ext4" and not root.in_memory and "RAM" not in str(root)


def test_without_a_mount_table_it_says_so(tmp_path):
    fs = filesystem_of(tmp_path, mounts=tmp_path / "missing")
    assert fs.fstype is None and "does not say which filesystem" in fs.describe()


def test_on_this_machine(tmp_path):
    fs = filesystem_of(tmp_path)
    if Path("/proc/self/mounts").exists():
        assert fs.fstype and fs.mount_point is not None
