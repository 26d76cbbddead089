"""How a server group looks in the API, by microversion.

Every version: ``id``, ``name`` and ``members`` (the uuids of its
servers); ``policies`` (a list of the one policy) and ``metadata``
(always empty) until 2.63; ``project_id`` and ``user_id`` from 2.13;
``policy`` and ``rules`` (``max_server_per_host`` when set) from 2.64.
"""


def shown(req, group) -> dict:
    view = {'id': group.uuid, 'name': group.name,
            'members': list(group.members)}
    if req.is_version('2.64'):
        view['policy'] = group.policy
        view['rules'] = ({} if group.max_server_per_host is None
                         else {'max_server_per_host':
                               group.max_server_per_host})
    else:
        view['policies'] = [group.policy]
        view['metadata'] = {}
    if req.is_version('2.13'):
        view['project_id'] = group.project_id
        view['user_id'] = group.user_id
    return view
