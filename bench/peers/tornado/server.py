"""Python tornado peer for the kiln benchmark suite: one process, one IOLoop."""

import asyncio
import json
import os
import signal

import tornado.web

STATIC_DIR = os.environ.get("STATIC_DIR", "static")


class Text(tornado.web.RequestHandler):
    def initialize(self, body: str) -> None:
        self.body = body

    def get(self) -> None:
        self.set_header("Content-Type", "text/plain")
        self.write(self.body)


class Json(tornado.web.RequestHandler):
    def get(self) -> None:
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps({"message": "Hello, World!"}))


class BigTable(tornado.web.RequestHandler):
    def get(self) -> None:
        rows = min(int(self.get_argument("rows", "1000") or 1000), 10_000)
        cols = min(int(self.get_argument("cols", "50") or 50), 1_000)
        parts = ["<table>"]
        for _ in range(rows):
            parts.append("<tr>")
            parts.extend(f"<td>{col}</td>" for col in range(1, cols + 1))
            parts.append("</tr>")
        parts.append("</table>")
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.write("".join(parts))


async def main() -> None:
    app = tornado.web.Application(
        [
            (r"/pong", Text, {"body": "PONG"}),
            (r"/hello", Text, {"body": "Hello World!"}),
            (r"/plaintext", Text, {"body": "Hello, World!"}),
            (r"/json", Json),
            (r"/bigtable", BigTable),
            (r"/static/(.*)", tornado.web.StaticFileHandler, {"path": STATIC_DIR}),
        ]
    )
    app.listen(int(os.environ.get("PORT", "8080")), address="127.0.0.1", backlog=4096)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
