# The non-blocking Ruby report's stack for /mix: EventMachine, a fiber per connection's
# requests, and the pg driver's async API. One process, one reactor.
#
# /mix/async: each query is sent with send_query_prepared, the fiber yields, and the reactor
#   resumes it when the connection's socket has the answer; meanwhile it serves other requests.
# /mix/blocking: the same queries through exec_prepared on one connection, which blocks the
#   whole reactor for their length, as a blocking driver does.
# Both: a short query per request and, every `every`-th request, the long one after it
# (pg_sleep for KILN_LONG_QUERY_MS, as kiln's), rows as JSON.
require "eventmachine"
require "http/parser"
require "json"
require "pg"
require "time"
require "uri"

DATABASE_URL = ENV.fetch("DATABASE_URL")
LONG_QUERY_S = Integer(ENV.fetch("KILN_LONG_QUERY_MS", "20")) / 1000.0
# kiln gives a worker one connection for short queries (pipelined) and 16 for long ones; pg
# cannot pipeline, so the short queries get a few connections of their own.
SHORT_CONNECTIONS = Integer(ENV.fetch("PG_CONNECTIONS", "4"))
LONG_CONNECTIONS = Integer(ENV.fetch("PG_LONG_CONNECTIONS", "16"))
DEFAULT_EVERY = 10
WORLD_ROWS = 10_000
STATEMENTS = {
  "world" => "SELECT id, randomnumber FROM world WHERE id = $1",
  "world_slowly" => "SELECT w.id, w.randomnumber FROM world w, pg_sleep($2) WHERE w.id = $1",
}.freeze

def connect
  pg = PG.connect(DATABASE_URL)
  STATEMENTS.each { |name, sql| pg.prepare(name, sql) }
  pg
end

# One connection driven by the reactor: the calling fiber yields until the answer is in.
class AsyncConnection
  module Watcher
    def initialize(connection)
      @connection = connection
    end

    def notify_readable
      @connection.readable
    end
  end

  def initialize
    @pg = connect
    @pg.setnonblocking(true)
    EM.watch(@pg.socket_io, Watcher, self).notify_readable = true
  end

  def query(statement, params)
    @pg.send_query_prepared(statement, params)
    @pg.flush
    @fiber = Fiber.current
    result = Fiber.yield
    result.check
    result.values
  ensure
    result&.clear
  end

  def readable
    @pg.consume_input
    return if @fiber.nil? || @pg.is_busy

    result = @pg.get_result
    while (more = @pg.get_result)
      more.clear
    end
    fiber, @fiber = @fiber, nil
    fiber.resume(result)
  end
end

# Connections lent to one fiber at a time; a fiber finding none waits for the next returned.
class Pool
  def initialize(size)
    @free = Array.new(size) { yield }
    @waiting = []
  end

  def with
    connection = @free.pop || wait
    yield connection
  ensure
    release(connection) if connection
  end

  private

  def wait
    @waiting << Fiber.current
    Fiber.yield
  end

  def release(connection)
    if (fiber = @waiting.shift)
      EM.next_tick { fiber.resume(connection) }
    else
      @free << connection
    end
  end
end

# The Date header, rendered once a second.
$date = Time.now.httpdate
$requests = 0

def mix_rows(mode, every, short_pool, long_pool, blocking)
  $requests += 1
  long = ($requests % every).zero?
  id = rand(1..WORLD_ROWS)
  rows = []
  if mode == "blocking"
    rows.concat(blocking.exec_prepared("world", [id]).values)
    rows.concat(blocking.exec_prepared("world_slowly", [id, LONG_QUERY_S]).values) if long
  else
    rows.concat(short_pool.with { |c| c.query("world", [id]) })
    rows.concat(long_pool.with { |c| c.query("world_slowly", [id, LONG_QUERY_S]) }) if long
  end
  rows.map { |(i, n)| { id: Integer(i), randomNumber: Integer(n) } }
end

class Handler < EM::Connection
  def initialize(short_pool, long_pool, blocking)
    super()
    @short_pool = short_pool
    @long_pool = long_pool
    @blocking = blocking
  end

  def post_init
    @parser = Http::Parser.new
    @pending = []
    @parser.on_message_complete = proc do
      @pending << [@parser.request_url, @parser.keep_alive?, @parser.http_minor]
      serve unless @serving
    end
  end

  def receive_data(data)
    @parser << data
  rescue HTTP::Parser::Error
    send_data "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    close_connection_after_writing
  end

  def unbind
    @closed = true
  end

  private

  # Answers the connection's requests in order, in a fiber that may wait on the database.
  def serve
    @serving = true
    Fiber.new do
      while !@closed && (request = @pending.shift)
        respond(*request)
      end
      @serving = false
    end.resume
  end

  def respond(url, keep_alive, minor)
    status, type, body = route(url)
    return if @closed

    head = +"HTTP/1.1 #{status}\r\nServer: eventmachine\r\nDate: #{$date}\r\n" \
            "Content-Type: #{type}\r\nContent-Length: #{body.bytesize}\r\n"
    head << "Connection: keep-alive\r\n" if keep_alive && minor.zero?
    head << "Connection: close\r\n" unless keep_alive
    send_data(head << "\r\n" << body)
    close_connection_after_writing unless keep_alive
  end

  def route(url)
    path, query = url.split("?", 2)
    mode = path.delete_prefix("/mix/")
    return ["404 Not Found", "text/plain", ""] unless %w[async blocking].include?(mode)

    every = URI.decode_www_form(query.to_s).to_h.fetch("every", DEFAULT_EVERY.to_s)
    return ["400 Bad Request", "text/plain", "every must be a number\n"] unless every.to_s.match?(/\A\d+\z/)

    rows = mix_rows(mode, [Integer(every, 10), 1].max, @short_pool, @long_pool, @blocking)
    ["200 OK", "application/json", JSON.generate(rows)]
  rescue PG::Error => e
    ["503 Service Unavailable", "text/plain", "database: #{e.message.lines.first}"]
  end
end

EM.epoll
EM.set_descriptor_table_size(65_536)
EM.run do
  short_pool = Pool.new(SHORT_CONNECTIONS) { AsyncConnection.new }
  long_pool = Pool.new(LONG_CONNECTIONS) { AsyncConnection.new }
  blocking = connect
  EM.add_periodic_timer(1) { $date = Time.now.httpdate }
  trap("TERM") { EM.stop }
  EM.start_server("127.0.0.1", Integer(ENV.fetch("PORT", "8080")), Handler, short_pool, long_pool, blocking)
end
