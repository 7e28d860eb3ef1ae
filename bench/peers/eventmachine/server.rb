# Ruby EventMachine peer for the kiln benchmark suite: one process, one reactor.
#
# The hello-world round-up ran an evma_httpserver app; that gem is not packaged in Debian,
# so the handler sits on EM::Connection with http_parser.rb doing the parsing.
require "eventmachine"
require "http/parser"
require "json"
require "time"

STATIC_DIR = File.expand_path(ENV.fetch("STATIC_DIR", "static"))
TEXT = {
  "/pong" => "PONG",
  "/hello" => "Hello World!",
  "/plaintext" => "Hello, World!",
}.freeze

# The Date header, rendered once a second.
$date = Time.now.httpdate

class Handler < EM::Connection
  def post_init
    @parser = Http::Parser.new
    @parser.on_message_complete = proc { respond }
  end

  def receive_data(data)
    @parser << data
  rescue HTTP::Parser::Error
    send_data "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    close_connection_after_writing
  end

  private

  def respond
    path = @parser.request_url.split("?", 2).first
    status, type, body = route(path)
    keep_alive = @parser.keep_alive?
    head = +"HTTP/1.1 #{status}\r\nServer: eventmachine\r\nDate: #{$date}\r\n" \
            "Content-Type: #{type}\r\nContent-Length: #{body.bytesize}\r\n"
    # An HTTP/1.0 client keeps the connection only if told so (ab -k).
    head << "Connection: keep-alive\r\n" if keep_alive && @parser.http_minor.zero?
    head << "Connection: close\r\n" unless keep_alive
    send_data(head << "\r\n" << body)
    close_connection_after_writing unless keep_alive
  end

  def route(path)
    if (text = TEXT[path])
      ["200 OK", "text/plain", text]
    elsif path == "/json"
      ["200 OK", "application/json", JSON.generate(message: "Hello, World!")]
    elsif path.start_with?("/static/") && (file = static_file(path.delete_prefix("/static/")))
      ["200 OK", "text/plain", File.binread(file)]
    else
      ["404 Not Found", "text/plain", ""]
    end
  end

  # The file under STATIC_DIR that `name` names, or nil (missing, or outside the folder).
  def static_file(name)
    file = File.expand_path(name, STATIC_DIR)
    file if file.start_with?("#{STATIC_DIR}/") && File.file?(file)
  end
end

EM.epoll
EM.set_descriptor_table_size(65_536)
EM.run do
  EM.add_periodic_timer(1) { $date = Time.now.httpdate }
  trap("TERM") { EM.stop }
  EM.start_server("127.0.0.1", Integer(ENV.fetch("PORT", "8080")), Handler)
end
