"""A guest that really runs: a one-sector boot disk that says hello.

The disk's master boot record holds 23 bytes of 16-bit x86 code that
SeaBIOS loads at 0x7c00 and runs under QEMU (TCG): it writes ``BANNER``
to the first serial port (I/O port 0x3f8, which the libvirt driver sends
to the instance's ``console.log``), then halts with interrupts off, so an
idle guest costs almost no host CPU. A banner in ``console.log`` proves the
guest booted from its disk. The disk is never written by the guest, so its
bytes (and their sha256) change only if something on the host changes it.

Nothing is downloaded or compiled: the code is written here byte by byte.

    cli                 fa
    xor ax, ax          31 c0
    mov ds, ax          8e d8
    cld                 fc
    mov si, 0x7c17      be 17 7c       ; the message, right after the code
    mov dx, 0x3f8       ba f8 03
  next:
    lodsb               ac
    test al, al         84 c0
    jz done             74 03
    out dx, al          ee
    jmp next            eb f8
  done:
    hlt                 f4
    jmp done            eb fd

A real kernel with an initramfs would take about 8 s to boot under TCG
here (doc/source/cluster.rst, "The guests") and this machine ships no
guest kernel, so the cluster does not build one.
"""

from oslo_concurrency import processutils

BANNER = b'nova-cluster guest booted from its disk'
_CODE = bytes.fromhex('fa31c08ed8fcbe177cbaf803ac84c07403eeebf8f4ebfd')
_LOAD_ADDRESS = 0x7c00
SECTOR = 512
DISK_SIZE = 1024 * 1024


def boot_sector(banner: bytes = BANNER) -> bytes:
    message = banner + b'\r\n\0'
    sector = _CODE + message
    # mov si, imm16 points right after the code.
    assert _CODE[6:9] == b'\xbe' + (_LOAD_ADDRESS + len(_CODE)).to_bytes(
        2, 'little')
    if len(sector) > SECTOR - 2:
        raise ValueError('banner too long for one sector')
    return sector.ljust(SECTOR - 2, b'\0') + b'\x55\xaa'


def write_image(path: str, banner: bytes = BANNER) -> str:
    """Write a qcow2 boot disk (1 MiB virtual) at ``path``; return it."""
    raw = path + '.raw'
    with open(raw, 'wb') as f:
        f.write(boot_sector(banner))
        f.truncate(DISK_SIZE)
    processutils.execute('qemu-img', 'convert', '-f', 'raw', '-O', 'qcow2',
                         raw, path)
    return path
