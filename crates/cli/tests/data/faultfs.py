#!/usr/bin/env python3
"""A FUSE file system with one file, `data`, whose reads fail with EIO in a chosen
byte range: the tests' stand-in for a failing disk (this kernel has no device-mapper).

usage: faultfs.py MOUNTPOINT SIZE FAIL_OFFSET FAIL_LENGTH

The file holds SIZE bytes in memory (writes are kept). A read that overlaps
[FAIL_OFFSET, FAIL_OFFSET + FAIL_LENGTH) fails with EIO; everything else works.
Mounted with direct_io, so every read(2) of the benchmark reaches this process with
its own offset and length (no page cache, no readahead). Runs in the foreground until
unmounted (fusermount -u MOUNTPOINT).
"""

import errno
import stat
import sys
import time

try:  # Debian's python3-fusepy
    from fusepy import FUSE, FuseOSError, Operations
except ImportError:  # fusepy from PyPI
    from fuse import FUSE, FuseOSError, Operations


class FaultFs(Operations):
    def __init__(self, size, fail_off, fail_len):
        self.data = bytearray(size)
        self.fail = (fail_off, fail_off + fail_len)
        self.now = time.time()

    def getattr(self, path, fh=None):
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o755, st_nlink=2,
                        st_ctime=self.now, st_mtime=self.now, st_atime=self.now)
        if path == "/data":
            return dict(st_mode=stat.S_IFREG | 0o644, st_nlink=1, st_size=len(self.data),
                        st_ctime=self.now, st_mtime=self.now, st_atime=self.now)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", "data"]

    def open(self, path, flags):
        if path != "/data":
            raise FuseOSError(errno.ENOENT)
        return 0

    def truncate(self, path, length, fh=None):
        if length != len(self.data):
            raise FuseOSError(errno.EPERM)

    def read(self, path, size, offset, fh):
        lo, hi = self.fail
        if offset < hi and offset + size > lo:
            raise FuseOSError(errno.EIO)
        return bytes(self.data[offset:offset + size])

    def write(self, path, buf, offset, fh):
        end = min(offset + len(buf), len(self.data))
        self.data[offset:end] = buf[:end - offset]
        return len(buf)

    def fsync(self, path, datasync, fh):
        return 0

    def flush(self, path, fh):
        return 0


def main():
    mnt, size, off, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    FUSE(FaultFs(size, off, length), mnt, foreground=True, direct_io=True, nothreads=True)


if __name__ == "__main__":
    main()
