"""A stand-in for Masakari's API over real HTTP on 127.0.0.1, for the
monitor's tests (the real one needs Keystone and RabbitMQ: the
integration tests run it). It keeps what it was posted and answers as
Masakari 22 does: a host notification for a host it already took is
refused with 409 (the host is under maintenance), and so is an instance
notification with the payload of one it already took (its duplicate
check), and it can be told to answer
an error (``failing``) or be stopped (down).
"""

import http.server
import json
import threading
import urllib.parse
import uuid

SEGMENT = '5e1c4a90-0d3f-4f43-8a51-8a0f4a7c7f11'


class MasakariStub:

    def __init__(self, hosts=('a', 'b')):
        self.hosts = {name: str(uuid.uuid4()) for name in hosts}
        # Every POST /notifications body, accepted or not, in order.
        self.posted: list[dict] = []
        self.notifications: list[dict] = []
        # An HTTP status to answer every call with (None: answer).
        self.failing: int | None = None
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                stub._answer(self, *stub.get(self.path))

            def do_POST(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = json.loads(self.rfile.read(length) or b'{}')
                stub._answer(self, *stub.post(self.path, body))

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                      Handler)
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        daemon=True)

    @property
    def url(self) -> str:
        return 'http://127.0.0.1:%d/v1' % self.server.server_address[1]

    def start(self) -> 'MasakariStub':
        self._thread.start()
        return self

    def stop(self) -> None:
        """Down: nothing listens on its port any more."""
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join()
        self.server.server_close()

    def _answer(self, handler, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header('Content-Type', 'application/json')
        handler.send_header('Content-Length', str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def post(self, path: str, body: dict) -> tuple[int, dict]:
        if path != '/v1/notifications':
            return 404, {}
        self.posted.append(body)
        if self.failing:
            return self.failing, {'error': {'message': 'stub failing'}}
        sent = body['notification']
        host_uuid = self.hosts.get(sent['hostname'])
        if host_uuid is None:
            return 404, {'itemNotFound': {'message': 'no host %s'
                                          % sent['hostname']}}
        if sent['type'] == 'COMPUTE_HOST' and any(
                n['source_host_uuid'] == host_uuid
                and n['type'] == 'COMPUTE_HOST'
                for n in self.notifications):
            return 409, {'conflictingRequest': {
                'message': 'host %s is already under maintenance'
                           % sent['hostname']}}
        if any(n['source_host_uuid'] == host_uuid
               and n['payload'] == sent['payload']
               for n in self.notifications):
            return 409, {'conflictingRequest': {
                'message': 'notification from host %s is duplicate'
                           % sent['hostname']}}
        notification = {key: value for key, value in sent.items()
                        if key != 'hostname'}
        notification.update(notification_uuid=str(uuid.uuid4()),
                            source_host_uuid=host_uuid, status='new')
        self.notifications.append(notification)
        return 200, {'notification': notification}

    def get(self, path: str) -> tuple[int, dict]:
        if self.failing:
            return self.failing, {'error': {'message': 'stub failing'}}
        url = urllib.parse.urlsplit(path)
        query = dict(urllib.parse.parse_qsl(url.query))
        if url.path == '/v1/segments':
            return 200, {'segments': [{'uuid': SEGMENT}]}
        if url.path == '/v1/segments/%s/hosts' % SEGMENT:
            return 200, {'hosts': [
                {'name': name, 'uuid': host_uuid}
                for name, host_uuid in self.hosts.items()
                if query.get('name') in (None, name)]}
        if url.path == '/v1/notifications':
            since = query.get('generated-since', '')
            return 200, {'notifications': [
                n for n in self.notifications
                if n['generated_time'] >= since]}
        return 404, {}
