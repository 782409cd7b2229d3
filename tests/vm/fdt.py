#!/usr/bin/python3
"""Read, edit and write flattened device trees (.dtb), without dtc.

The ARM guest (vmlib.py, card "vexpress") boots Debian's own
vexpress-v2p-ca9.dtb with one change: the CoreTile's PL111 gets a
"panel-dpi" panel with fixed timings (panel_dtb()), because the kernel's
fbdev driver for it (amba-clcd, CONFIG_FB_ARMCLCD) only drives a DPI panel
and the file connects the PL111 to a DVI transmitter instead, so the probe
fails with -ENOENT and there is no /dev/fb0.  Real boards describe their
panel the same way.

The format (devicetree specification, chapter 5): a 40-byte big-endian
header, the memory reservation map, the structure block (BEGIN_NODE name,
PROP len nameoff value, END_NODE, END tokens, each padded to 4 bytes) and
the strings block of property names.
"""

import struct

MAGIC = 0xD00DFEED
BEGIN_NODE, END_NODE, PROP, NOP, END = 1, 2, 3, 4, 9


class Node:
    """A device tree node: name, ordered properties (name -> bytes), children."""

    def __init__(self, name, props=None, children=None):
        self.name = name
        self.props = dict(props or {})
        self.children = list(children or [])

    def child(self, name):
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError("no node %r under %r" % (name, self.name))

    def find(self, path):
        """The node at an absolute path such as /bus@40000000/clcd@1f000."""
        node = self
        for part in path.strip("/").split("/"):
            if part:
                node = node.child(part)
        return node

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def u32(*values):
    """A property value of big-endian cells."""
    return struct.pack(">%dI" % len(values), *values)


def string(text):
    return text.encode() + b"\0"


class Tree:
    """A parsed .dtb: the root node plus what the header carries along."""

    def __init__(self, root, reserve, boot_cpuid):
        self.root = root
        self.reserve = reserve
        self.boot_cpuid = boot_cpuid

    @classmethod
    def parse(cls, data):
        (magic, _total, off_struct, off_strings, off_rsv, version, _last, boot_cpuid,
         size_strings, size_struct) = struct.unpack_from(">10I", data, 0)
        if magic != MAGIC or version < 16:
            raise ValueError("not a version 16/17 flattened device tree")
        reserve = []
        pos = off_rsv
        while True:
            addr, size = struct.unpack_from(">QQ", data, pos)
            pos += 16
            if addr == 0 and size == 0:
                break
            reserve.append((addr, size))
        strings = data[off_strings:off_strings + size_strings]
        pos = off_struct
        end = off_struct + size_struct
        stack = []
        root = None
        while pos < end:
            (token,) = struct.unpack_from(">I", data, pos)
            pos += 4
            if token == BEGIN_NODE:
                nul = data.index(b"\0", pos)
                node = Node(data[pos:nul].decode())
                pos = (nul + 4) & ~3
                if stack:
                    stack[-1].children.append(node)
                else:
                    root = node
                stack.append(node)
            elif token == END_NODE:
                stack.pop()
            elif token == PROP:
                length, nameoff = struct.unpack_from(">II", data, pos)
                pos += 8
                name = strings[nameoff:strings.index(b"\0", nameoff)].decode()
                stack[-1].props[name] = bytes(data[pos:pos + length])
                pos = (pos + length + 3) & ~3
            elif token == NOP:
                continue
            elif token == END:
                break
            else:
                raise ValueError("bad structure token %d at %d" % (token, pos - 4))
        if root is None or stack:
            raise ValueError("unbalanced structure block")
        return cls(root, reserve, boot_cpuid)

    def to_bytes(self):
        strings = bytearray()
        offsets = {}
        body = bytearray()

        def name_offset(name):
            if name not in offsets:
                offsets[name] = len(strings)
                strings.extend(name.encode() + b"\0")
            return offsets[name]

        def emit(node):
            name = node.name.encode() + b"\0"
            body.extend(struct.pack(">I", BEGIN_NODE) + name + b"\0" * (-len(name) % 4))
            for key, value in node.props.items():
                body.extend(struct.pack(">III", PROP, len(value), name_offset(key)) + value
                            + b"\0" * (-len(value) % 4))
            for c in node.children:
                emit(c)
            body.extend(struct.pack(">I", END_NODE))

        emit(self.root)
        body.extend(struct.pack(">I", END))
        rsv = b"".join(struct.pack(">QQ", a, s) for a, s in self.reserve) + b"\0" * 16
        off_rsv = 40
        off_struct = off_rsv + len(rsv)
        off_strings = off_struct + len(body)
        total = off_strings + len(strings)
        header = struct.pack(">10I", MAGIC, total, off_struct, off_strings, off_rsv, 17, 16,
                             self.boot_cpuid, len(strings), len(body))
        return header + rsv + bytes(body) + bytes(strings)

    def new_phandle(self):
        used = [struct.unpack(">I", n.props["phandle"])[0]
                for n in self.root.walk() if "phandle" in n.props]
        return max(used, default=0) + 1

    def find_compatible(self, compatible):
        """Every node whose compatible list names `compatible`."""
        want = compatible.encode()
        return [n for n in self.root.walk()
                if want in n.props.get("compatible", b"").split(b"\0")]


# The panel the PL111 drives: VESA 640x480@60 (25.175 MHz, the DVI
# transmitter's lowest mode). The CoreTile PL111's max-memory-bandwidth
# (95 MB/s) allows 16 bits per pixel at this clock (amba-clcd rounds
# 95e6 * 8 / 25.175e6 = 30 down to a power of two), so fb0 is RGB565.
PANEL_TIMING = {"clock-frequency": 25175000, "hactive": 640, "vactive": 480,
                "hfront-porch": 16, "hback-porch": 48, "hsync-len": 96,
                "vfront-porch": 10, "vback-porch": 33, "vsync-len": 2}


def panel_dtb(data, clcd_address="10020000", timing=PANEL_TIMING):
    """Debian's vexpress .dtb with a panel-dpi panel on the PL111 at
    `clcd_address` and every other PL111 disabled (one fb0, on QEMU's first
    display). The panel is a child of the PL111's node, so no platform device
    is made for it and the PL111 waits for no panel driver."""
    tree = Tree.parse(data)
    clcds = tree.find_compatible("arm,pl111")
    target = [n for n in clcds if n.name.endswith("@" + clcd_address)]
    if len(target) != 1:
        raise ValueError("no single PL111 at %s among %r" % (clcd_address,
                                                             [n.name for n in clcds]))
    clcd = target[0]
    for other in clcds:
        if other is not clcd:
            other.props["status"] = string("disabled")
    endpoint = clcd.child("port").child("endpoint")
    ep_phandle = endpoint.props.get("phandle")
    if ep_phandle is None:
        ep_phandle = u32(tree.new_phandle())
        endpoint.props["phandle"] = ep_phandle
    panel_ep = Node("endpoint", {"remote-endpoint": ep_phandle,
                                 "phandle": u32(tree.new_phandle())})
    panel = Node("panel", {"compatible": string("panel-dpi")}, [
        Node("panel-timing", {k: u32(v) for k, v in timing.items()}),
        Node("port", {}, [panel_ep])])
    endpoint.props["remote-endpoint"] = panel_ep.props["phandle"]
    clcd.children.append(panel)
    return tree.to_bytes()


if __name__ == "__main__":
    import sys
    with open(sys.argv[1], "rb") as f:
        blob = f.read()
    with open(sys.argv[2], "wb") as f:
        f.write(panel_dtb(blob))
