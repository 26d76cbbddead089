"""Request context: who is asking, and the request id every record carries."""

import dataclasses

from oslo_utils import uuidutils


def generate_request_id():
    return 'req-' + uuidutils.generate_uuid()


@dataclasses.dataclass
class RequestContext:
    user_id: str | None = None
    project_id: str | None = None
    is_admin: bool = False
    request_id: str = dataclasses.field(default_factory=generate_request_id)
    global_request_id: str | None = None
    roles: tuple = ()

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values):
        known = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in values.items() if k in known}
        if 'roles' in kwargs:
            kwargs['roles'] = tuple(kwargs['roles'] or ())
        return cls(**kwargs)

    def elevated(self):
        return dataclasses.replace(self, is_admin=True)


def get_admin_context():
    return RequestContext(user_id='admin', project_id='admin', is_admin=True,
                          roles=('admin',))
