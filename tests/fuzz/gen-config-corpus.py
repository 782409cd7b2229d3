#!/usr/bin/env python3
# Writes the seed corpus of fuzz-config into corpus/config/: good files,
# every key with good and bad values, bad lines, long lines, NUL bytes, huge
# numbers, and drop-ins (a line "---" starts the next file; see
# fuzz-config.c). The output is committed, so this only needs to run when
# seeds are added.
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "corpus", "config")

keys = {
    "vt": ["2", "tty3", "/dev/tty63"],
    "switchvt": None,
    "fbdev": ["/dev/fb0", "/dev/fb0,/dev/fb1", "/dev/fb0,", "a,b,c,d,e"],
    "screens": ["mirror", "separate", "clone", ""],
    "fb-wait": ["0", "10", "600"],
    "login": ["/bin/login -p", "/bin/sh\t-l  -i"],
    "term": ["xterm-256color", "linux"],
    "session-socket": ["/run/consoled/session.sock"],
    "palette": ["linux", "xterm"],
    "font-file": ["/usr/share/consolefonts/Lat15-Terminus16.psf.gz", ""],
    "font-name": ["DejaVu Sans Mono:bold", ""],
    "font-size": ["1", "12", "500", "12,24", "12,,24"],
    "font-dpi": ["0", "96", "2400"],
    "xkb-model": ["pc105"],
    "xkb-layout": ["de", ""],
    "xkb-variant": ["nodeadkeys"],
    "xkb-options": ["ctrl:nocaps,compose:ralt"],
    "xkb-repeat-delay": ["1", "250", "10000"],
    "xkb-repeat-rate": ["0", "30", "1000"],
    "sb-size": ["0", "1000", "100000"],
    "scroll-mode": ["auto", "pan", "wrap", "copy", "redraw", "shadow"],
    "rotate": ["0", "1", "2", "3", "90", "180", "270", "45", "-1", "4", "0,1", "0,1,2,3,0"],
    "calibrate": None,
    "no-calibrate": None,
    "stats": None,
    "backend": ["auto", "none", "cirrus"],
    "verbose": None,
    "compose-file": ["/etc/consoled/Compose", ""],
    "autologin": ["tester", "root@tty2", "-f"],
    "vcs": None,
    "color0": ["#000000", "#FfFfFf"],
    "color15": ["#123456"],
    "foreground": ["#839496"],
    "background": ["#002b36"],
    "bell": ["visual", "sound", "none", "beep"],
    "kernel-messages": ["kernel", "off", "0", "4", "8", "9", "-1"],
    "kernel-messages-time": ["5", "1", "3600", "0", "3601"],
    "kernel-messages-lines": ["3", "1", "10", "0", "11"],
}
bools = ["yes", "no", "true", "false", "on", "off", "1", "0"]

seeds = {}
seeds["good-example"] = (
    b"# /etc/consoled/consoled.conf\n"
    b"font-file=/usr/share/consolefonts/Lat15-Terminus16.psf.gz\n"
    b"sb-size=5000\n"
    b"palette=xterm\n"
    b"---\n"
    b"# 50-keyboard.conf\n"
    b"xkb-layout=de\n"
    b"xkb-options=compose:ralt\n"
)
lines = []
for k, vals in keys.items():
    lines.append("%s=%s" % (k, (vals or ["yes"])[0]))
seeds["every-key"] = ("\n".join(lines) + "\n").encode()
lines = []
for k, vals in keys.items():
    for v in vals or bools:
        lines.append("  %s \t=\t %s  " % (k, v))
seeds["every-key-every-value"] = ("\n".join(lines) + "\n").encode()
seeds["every-key-alone"] = ("\n".join(keys) + "\n").encode()
seeds["every-key-empty"] = ("\n".join(k + "=" for k in keys) + "\n").encode()
seeds["bad-values"] = (
    b"vt=0\nvt=64\nvt=tty\nvt=/dev/ttyS0\nvt=3x\nvt=-1\n"
    b"switchvt=maybe\nno-calibrate=2\nfbdev=\nterm=\nterm=a/b\nbackend=../evil\n"
    b"palette=solarised\nscroll-mode=fast\nlogin=\nlogin= \t \n"
    b"font-size=0\nfont-size=501\nfont-dpi=2401\nxkb-repeat-delay=0\n"
    b"xkb-repeat-delay=10001\nxkb-repeat-rate=1001\nsb-size=100001\n"
)
seeds["huge-numbers"] = (
    b"sb-size=4294967295\nsb-size=4294967296\nsb-size=18446744073709551615\n"
    b"sb-size=18446744073709551616\nsb-size=99999999999999999999999999999999\n"
    b"sb-size=-1\nsb-size=+5\nsb-size= 5\nsb-size=0x10\nsb-size=1e3\nsb-size=010\n"
    b"vt=4294967297\nvt=tty4294967297\nfont-size=4294967308\nfont-dpi=-0\n"
    b"xkb-repeat-rate=00000000000000000000000000000030\n"
)
seeds["bad-lines"] = (
    b"foo=bar\n=value\n==\nkey==value\nvt\npalette\n# comment\n   # indented comment\n"
    b"#vt=5\n\n \t \nhelp\nversion\nconfig=/etc/passwd\nlist-backends\n--vt=2\n"
    b"VT=2\nvt =\n= \nterm=ok # not a comment\n"
)
seeds["format-strings"] = (
    b"term=%s%s%s%n%x\n%s%n=%p\nsb-size=%d\nlogin=%s %n %x\nfont-name=%m %%\n"
)
seeds["whitespace"] = (
    b"\tterm\t=\tvt220\t\n\vvt\v=\v4\v\n\fsb-size=\f7\f\r\nstats\r\n"
    b"login=/bin/sh\v-l\r\npalette=xterm \x0b\n"
)
seeds["crlf"] = b"term=linux\r\nvt=5\r\nverbose=yes\r\n\r\n"
seeds["no-final-newline"] = b"term=linux\nsb-size=12"
seeds["empty"] = b""
seeds["only-newlines"] = b"\n" * 100
seeds["nul-bytes"] = (
    b"term=ab\x00cd\nvt=3\x00garbage\n\x00\nsb-size=1\x000\n\x00term=hidden\n"
    b"font-name=a\x00\x00\x00b\nlogin=/bin/sh\x00 -c evil\n"
)
seeds["long-line"] = b"term=" + b"a" * 20000 + b"\nvt=2\n"
seeds["long-key"] = b"k" * 20000 + b"=v\n" + b"x" * 5000 + b"\n"
seeds["long-login"] = b"login=" + b"a " * 8000 + b"\n"
seeds["long-login-blanks"] = b"login=" + b" \t" * 8000 + b"x\n"
seeds["long-value-blanks"] = b"term=" + b" " * 8000 + b"t" + b"\t" * 8000 + b"\n"
seeds["many-lines"] = b"".join(b"sb-size=%d\n" % i for i in range(0, 3000, 7))
seeds["utf8"] = "term=ünïcödé\nfont-name=Noto Sans Mono CJK JP:style=Regular\nxkb-layout=日本\n".encode()
seeds["binary"] = bytes((i * 131 + 7) & 0xFF for i in range(512))
seeds["bad-utf8"] = b"term=\xff\xfe\xc3\nfont-file=\xed\xa0\x80\n\xc0\xaf=1\n"
seeds["dropins"] = (
    b"term=main\nsb-size=1\nvt=2\n---\nterm=ten\nsb-size=20\n---\nbogus line\nsb-size=x\n"
    b"---\nvt=3\n"
)
seeds["dropins-no-main"] = b"---\nvt=2\nstats\n---\nterm=second\n"
seeds["dropins-empty"] = b"---\n---\n---\n---\n"
seeds["dropins-many"] = b"".join(b"sb-size=%d\n---\n" % i for i in range(12))
seeds["dropin-separator-lookalikes"] = b"--\n----\n --- \n---x\nterm=a\n---"
seeds["vconsole"] = (
    b'XKBLAYOUT="de"\nXKBVARIANT=""\nexport XKBOPTIONS=ctrl:nocaps\n'
    b"XKBMODEL='pc105' # comment\nKEYMAP=de-latin1\nFONT=eurlatgr\n"
)
seeds["vconsole-bad-quotes"] = (
    b'XKBLAYOUT="unterminated\nXKBMODEL=\'also\nXKBVARIANT="a" "b"\n'
    b"export\tXKBOPTIONS=\"x\"\nexportXKBLAYOUT=us\nXKBLAYOUT=\n"
)
seeds["keyboard-in-dropin"] = (
    b"term=linux\n---\n# /etc/default/keyboard\nXKBMODEL=\"pc105\"\nXKBLAYOUT=\"fr\"\n"
    b'XKBVARIANT="oss"\nXKBOPTIONS=""\nBACKSPACE="guess"\n'
)
seeds["vconsole-keymap"] = b"KEYMAP=de-latin1\nFONT=eurlatgr\n---\nKEYMAP=no-such-map\n"
seeds["xkb-in-config-and-vconsole"] = b"xkb-variant=dvorak\nXKBLAYOUT=us\n"
# palettes and colour keys (consoled.conf(5), COLOURS)
seeds["colors"] = (
    b"palette=solarized\npalette=solarized-light\npalette=vga\npalette=tango\n"
    + b"".join(b"color%d=#%02x%02X%02x\n" % (i, i * 16, 255 - i, i) for i in range(16))
    + b"foreground=#839496\nbackground=#002B36\n---\ncolor7 = #ffffff \nbackground=#000000\n"
)
seeds["colors-bad"] = (
    b"color0=#12345\ncolor1=#1234567\ncolor2=123456\ncolor3=#12345g\ncolor4=\ncolor5\n"
    b"color16=#000000\ncolor-1=#000000\ncolor01=#000000\nforeground=red\n"
    b"background=# 12345\nbackground=#\nforeground=#+12345\npalette=Solarized\n"
    b"palette=solarized-dark\ncolor6=#0x1234\n"
)

os.makedirs(out, exist_ok=True)
for name, data in sorted(seeds.items()):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), out), file=sys.stderr)
