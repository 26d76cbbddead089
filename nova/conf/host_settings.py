"""The settings one compute host runs with, as a typed value.

Several compute hosts can live in one process (``nova-all``, functional
tests), each with its own ``instances_path`` and libvirt URI, so the manager
and the virt drivers take a ``HostSettings`` instead of reading the global
configuration deep inside. ``from_conf`` builds the value a single
``nova-compute`` process uses.

Example::

    settings = HostSettings.from_conf(CONF).replace(
        host='compute2', instances_path='/srv/c2/instances',
        connection_uri='test:///srv/c2/node.xml')
"""

import dataclasses
import os

from nova.conf import glance as glance_conf


@dataclasses.dataclass(frozen=True)
class GlanceSettings:
    """Where Glance is and the service user that reads it (``[glance]``),
    for ``[image] backend = glance``."""
    # The first of api_servers, else endpoint_override; None: the catalog.
    endpoint: str | None = None
    service_type: str = 'image'
    interfaces: tuple = ()
    region_name: str | None = None
    # keystoneauth's plugin name and its options, as (name, value) pairs;
    # no auth_type: no service user (an endpoint is then required).
    auth_type: str | None = None
    auth_options: tuple = ()

    @classmethod
    def from_conf(cls, conf, group: str = 'glance') -> 'GlanceSettings':
        # Imported here, not at the top: only [image] backend = glance
        # reads them (nova.conf.glance says why).
        from keystoneauth1 import loading as ks_loading
        glance_conf.register_keystoneauth_opts(conf, group)
        section = conf[group]
        auth_options: tuple = ()
        if section.auth_type:
            # keystoneauth registers a plugin's options only when it loads
            # the plugin: registered here to be read.
            opts = ks_loading.get_auth_plugin_conf_options(section.auth_type)
            conf.register_opts(opts, group=group)
            auth_options = tuple((opt.dest, section[opt.dest])
                                 for opt in opts
                                 if section[opt.dest] is not None)
        return cls(
            endpoint=(section.api_servers[0] if section.api_servers
                      else section.endpoint_override),
            service_type=section.service_type,
            interfaces=tuple(section.valid_interfaces or ()),
            region_name=section.region_name,
            auth_type=section.auth_type, auth_options=auth_options)


@dataclasses.dataclass(frozen=True)
class HostSettings:
    host: str
    instances_path: str
    connection_uri: str = ''
    virt_type: str = 'kvm'
    vif_driver: str = 'auto'
    bridges: tuple = ()
    vif_plugging_timeout: int = 300
    vif_plugging_is_fatal: bool = True
    resume_guests_state_on_host_boot: bool = False
    shutdown_timeout: int = 60
    wait_running_timeout: int = 60
    image_store_path: str = ''
    # 'store' (the local image store) or 'glance' ([image] backend).
    image_backend: str = 'store'
    glance: GlanceSettings | None = None
    images_type: str = 'qcow2'
    instances_path_must_be_mounted: bool = False
    libvirt_config_dir: str = '/etc/libvirt'

    @classmethod
    def from_conf(cls, conf):
        return cls(
            host=conf.host,
            instances_path=os.path.abspath(conf.instances_path),
            connection_uri=conf.libvirt.connection_uri,
            virt_type=conf.libvirt.virt_type,
            vif_driver=conf.libvirt.vif_driver,
            bridges=tuple(conf.network.bridges),
            vif_plugging_timeout=conf.vif_plugging_timeout,
            vif_plugging_is_fatal=conf.vif_plugging_is_fatal,
            resume_guests_state_on_host_boot=(
                conf.resume_guests_state_on_host_boot),
            shutdown_timeout=conf.shutdown_timeout,
            wait_running_timeout=conf.libvirt.wait_running_timeout,
            image_store_path=os.path.abspath(conf.image.store_path),
            image_backend=conf.image.backend,
            glance=(GlanceSettings.from_conf(conf)
                    if conf.image.backend == 'glance' else None),
            images_type=conf.libvirt.images_type,
            instances_path_must_be_mounted=(
                conf.instances_path_must_be_mounted),
            libvirt_config_dir=conf.libvirt.config_dir,
        )

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)
