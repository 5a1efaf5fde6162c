#!/usr/bin/env python3
# tamper.py: rewrite a bundle with one thing changed, using Python's own
# tarfile and gzip (an implementation independent of libarchive).
# SPDX-License-Identifier: MIT
#
#   tamper.py list IN                       file members, one per line
#   tamper.py byte IN OUT MEMBER            flip one byte in the middle
#   tamper.py add IN OUT NAME               add a file NAME
#   tamper.py remove IN OUT MEMBER          drop a member
#   tamper.py rename IN OUT MEMBER NAME     store MEMBER under NAME
#   tamper.py symlink IN OUT NAME TARGET    add a symbolic link
#   tamper.py hardlink IN OUT NAME TARGET   add a hard link
#   tamper.py grow IN OUT MEMBER            append bytes (header says so)
#   tamper.py dup IN OUT MEMBER             the member a second time, at the end
#   tamper.py edit IN OUT MEMBER OLD NEW    replace text OLD by NEW and re-sign
#                                           MANIFEST and BUNDLE-MANIFEST so
#                                           that only deeper checks can see it
#   tamper.py pad IN OUT MEMBER N           append N newlines, re-signed
#   tamper.py addsigned IN OUT NAME         add a file NAME, re-signed
#   tamper.py sparse IN OUT NAME SIZE       add NAME as a GNU sparse file of
#                                           SIZE bytes holding one stored
#                                           byte, declared in BUNDLE-MANIFEST
#   tamper.py deep IN OUT N                 add a folder N levels deep
#   tamper.py append IN OUT KIND            after the tar's end, inside the
#                                           gzip stream: "tar" (a second
#                                           archive) or "zeros"
#   tamper.py many                          each line of stdin one of the
#                                           commands above, its arguments
#                                           separated by tabs: many bundles
#                                           for one start of Python
import gzip
import hashlib
import io
import sys
import tarfile


def load(path):
    out = []
    with tarfile.open(path, "r:gz") as t:
        for m in t.getmembers():
            data = t.extractfile(m).read() if m.isfile() else None
            out.append((m, data))
    return out


def save(path, members):
    with tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT) as t:
        for m, data in members:
            if data is not None:
                m.size = len(data)
                t.addfile(m, io.BytesIO(data))
            else:
                t.addfile(m)


def find(members, name):
    for i, (m, _) in enumerate(members):
        if m.name == name:
            return i
    sys.exit("tamper.py: no member " + name)


def resign(members):
    top = members[0][0].name.rstrip("/")
    files = {m.name[len(top) + 1:]: d for m, d in members if d is not None}
    man = files["MANIFEST"].decode()
    lines = []
    for line in man.splitlines():
        rel = line[66:]
        if rel in files:
            line = hashlib.sha256(files[rel]).hexdigest() + "  " + rel
        lines.append(line)
    files["MANIFEST"] = ("\n".join(lines) + "\n").encode()
    bm = ["# prereg bundle 1"]
    for rel in sorted(files):
        if rel != "BUNDLE-MANIFEST":
            bm.append("%s %d %s" % (hashlib.sha256(files[rel]).hexdigest(),
                                    len(files[rel]), rel))
    files["BUNDLE-MANIFEST"] = ("\n".join(bm) + "\n").encode()
    return [(m, files[m.name[len(top) + 1:]] if d is not None else None)
            for m, d in members]


def save_raw(path, raw):
    with open(path, "wb") as f:
        f.write(gzip.compress(raw, mtime=0))


def tar_bytes(members, fmt=tarfile.PAX_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for m, data in members:
            if data is not None:
                m.size = len(data)
                t.addfile(m, io.BytesIO(data))
            else:
                t.addfile(m)
    return bytearray(buf.getvalue())


def octal(raw, off, width, value):
    if value < 8 ** (width - 1):
        raw[off:off + width] = (b"%0*o" % (width - 1, value)) + b"\0"
    else:  # base-256, as GNU tar writes large numbers
        raw[off:off + width] = b"\x80" + value.to_bytes(width - 1, "big")


def sparse(ms, out, name, size):
    m = tarfile.TarInfo(name)
    m.mode = 0o444
    ms.append((m, b"x"))
    ms = resign(ms)
    i = find(ms, ms[0][0].name.rstrip("/") + "/BUNDLE-MANIFEST")
    rel = name.split("/", 1)[1]
    lines = ms[i][1].decode().splitlines()
    lines = [" ".join([l.split(" ")[0], str(size), rel])
             if l.endswith(" " + rel) else l for l in lines]
    ms[i] = (ms[i][0], ("\n".join(lines) + "\n").encode())
    raw = tar_bytes(ms, tarfile.GNU_FORMAT)
    at = raw.find(name.encode() + b"\0")
    raw[at + 156:at + 157] = b"S"  # old GNU sparse
    octal(raw, at + 386, 12, size - 1)  # one region: the last byte
    octal(raw, at + 398, 12, 1)
    raw[at + 482] = 0
    octal(raw, at + 483, 12, size)  # its real size
    raw[at + 148:at + 156] = b" " * 8
    raw[at + 148:at + 156] = b"%06o\0 " % sum(raw[at:at + 512])
    save_raw(out, bytes(raw))


def main(a):
    cmd = a[0]
    if cmd == "list":
        for m, d in load(a[1]):
            if d is not None:
                print(m.name)
        return
    ms = load(a[1])
    out = a[2]
    if cmd == "byte":
        i = find(ms, a[3])
        d = bytearray(ms[i][1])
        if not d:
            d = bytearray(b"x")  # an empty member: a byte appears
        else:
            d[len(d) // 2] ^= 0x01
        ms[i] = (ms[i][0], bytes(d))
    elif cmd == "add":
        m = tarfile.TarInfo(a[3])
        m.mode = 0o444
        ms.append((m, b"added\n"))
    elif cmd == "remove":
        del ms[find(ms, a[3])]
    elif cmd == "rename":
        i = find(ms, a[3])
        ms[i][0].name = a[4]
    elif cmd in ("symlink", "hardlink"):
        m = tarfile.TarInfo(a[3])
        m.type = tarfile.SYMTYPE if cmd == "symlink" else tarfile.LNKTYPE
        m.linkname = a[4]
        ms.append((m, None))
    elif cmd == "grow":
        i = find(ms, a[3])
        ms[i] = (ms[i][0], ms[i][1] + b"more bytes than declared\n")
    elif cmd == "dup":
        i = find(ms, a[3])
        m = tarfile.TarInfo(ms[i][0].name)
        m.mode = 0o444
        ms.append((m, ms[i][1]))
    elif cmd == "edit":
        i = find(ms, a[3])
        old, new = a[4].encode(), a[5].encode()
        if old not in ms[i][1]:
            sys.exit("tamper.py: %r not in %s" % (a[4], a[3]))
        ms[i] = (ms[i][0], ms[i][1].replace(old, new))
        ms = resign(ms)
    elif cmd == "pad":
        i = find(ms, a[3])
        ms[i] = (ms[i][0], ms[i][1] + b"\n" * int(a[4]))
        ms = resign(ms)
    elif cmd == "addsigned":
        m = tarfile.TarInfo(a[3])
        m.mode = 0o444
        ms.append((m, b"<script>alert(1)</script>\n"))
        ms = resign(ms)
    elif cmd == "sparse":
        return sparse(ms, out, a[3], int(a[4]))
    elif cmd == "deep":
        name = ms[0][0].name.rstrip("/")
        for _ in range(int(a[3])):
            name += "/d"
            m = tarfile.TarInfo(name)
            m.type, m.mode = tarfile.DIRTYPE, 0o755
            ms.append((m, None))
    elif cmd == "append":
        raw = tar_bytes(ms)
        if a[3] == "tar":
            m = tarfile.TarInfo(ms[0][0].name.rstrip("/") + "/extra.txt")
            raw += tar_bytes([(m, b"not verified\n")])
        else:
            raw += bytes(1 << 16)
        return save_raw(out, bytes(raw))
    else:
        sys.exit("tamper.py: unknown command " + cmd)
    save(out, ms)


if sys.argv[1:] == ["many"]:
    for line in sys.stdin.read().splitlines():
        main(line.split("\t"))
else:
    main(sys.argv[1:])
