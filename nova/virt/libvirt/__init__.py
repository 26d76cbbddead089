"""The libvirt virt driver (``compute_driver = libvirt.LibvirtDriver``)."""

from nova.virt.libvirt.driver import LibvirtDriver  # noqa: F401
