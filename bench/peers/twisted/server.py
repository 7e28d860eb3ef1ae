"""twisted.web peer for the kiln benchmark suite: one process, the epoll reactor."""

import json
import os
import signal

from twisted.internet import epollreactor

epollreactor.install()

from twisted.internet import reactor  # noqa: E402 - the reactor is chosen before it is imported
from twisted.web import resource, server, static  # noqa: E402


class Text(resource.Resource):
    isLeaf = True

    def __init__(self, body: bytes, content_type: bytes = b"text/plain") -> None:
        super().__init__()
        self.body = body
        self.content_type = content_type

    def render_GET(self, request) -> bytes:
        request.setHeader(b"content-type", self.content_type)
        return self.body


class Json(resource.Resource):
    isLeaf = True

    def render_GET(self, request) -> bytes:
        request.setHeader(b"content-type", b"application/json")
        return json.dumps({"message": "Hello, World!"}).encode()


def main() -> None:
    root = resource.Resource()
    root.putChild(b"pong", Text(b"PONG"))
    root.putChild(b"hello", Text(b"Hello World!"))
    root.putChild(b"plaintext", Text(b"Hello, World!"))
    root.putChild(b"json", Json())
    root.putChild(b"static", static.File(os.environ.get("STATIC_DIR", "static")))
    site = server.Site(root)
    site.displayTracebacks = False
    reactor.listenTCP(int(os.environ.get("PORT", "8080")), site, backlog=4096, interface="127.0.0.1")
    signal.signal(signal.SIGTERM, lambda *_: reactor.callFromThread(reactor.stop))
    reactor.run(installSignalHandlers=False)


if __name__ == "__main__":
    main()
