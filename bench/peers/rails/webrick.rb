# WEBrick, Ruby's out-of-the-box server (the Snap report's), running config.ru.
#
# WEBrick never sets TCP_NODELAY, so each keep-alive response waits for the client's delayed
# ACK (Nagle): about 40 ms a request. Set it on every accepted socket, as the other servers do.
require "rack"
require "rack/handler/webrick"
require "socket"

module NoDelay
  def run(sock)
    sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
    super
  end
end
WEBrick::HTTPServer.prepend(NoDelay)

app, = Rack::Builder.parse_file(File.join(__dir__, "config.ru"))
Rack::Handler::WEBrick.run(
  app,
  Host: "127.0.0.1",
  Port: Integer(ENV.fetch("PORT")),
  Logger: WEBrick::Log.new($stderr, WEBrick::BasicLog::WARN),
  AccessLog: [],
)
