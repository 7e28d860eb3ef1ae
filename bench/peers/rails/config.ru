# A one-file Rails 6.1 app for the kiln benchmark suite, the same for puma, thin and WEBrick.
require "action_controller/railtie"
require "time"

# The suite's contract has every response carry Date and Server; puma sends neither and thin
# no Date, so add whichever the server will not.
class DateAndServer
  def initialize(app, server)
    @app = app
    @server = server
  end

  def call(env)
    status, headers, body = @app.call(env)
    headers["Date"] ||= Time.now.httpdate
    headers["Server"] ||= @server
    [status, headers, body]
  end
end

class BenchApp < Rails::Application
  # Build artefacts (tmp/, log/) go under bench/.build, never into the checkout.
  config.root = ENV.fetch("RAILS_APP_ROOT", __dir__)
  config.eager_load = true
  config.cache_classes = true
  config.consider_all_requests_local = false
  config.hosts.clear
  config.secret_key_base = "kiln-bench-only"
  config.logger = ActiveSupport::Logger.new(nil)
  config.log_level = :fatal
  config.public_file_server.enabled = false
  # Rails 6.1 sends no Content-Length, and without one thin closes every connection.
  config.middleware.insert_before 0, Rack::ContentLength
  config.middleware.insert_before 0, DateAndServer, ENV.fetch("RAILS_SERVER_NAME", "rails")
end

BenchApp.initialize!

class BenchController < ActionController::Base
  def pong
    render plain: "PONG"
  end

  def hello
    render plain: "Hello World!"
  end

  def plaintext
    render plain: "Hello, World!"
  end

  def json
    render json: { message: "Hello, World!" }
  end
end

# Drawn after initialize!, or the routes are reset and everything is a 404.
BenchApp.routes.draw do
  get "/pong", to: "bench#pong"
  get "/hello", to: "bench#hello"
  get "/plaintext", to: "bench#plaintext"
  get "/json", to: "bench#json"
  mount Rack::Files.new(ENV.fetch("STATIC_DIR")), at: "/static"
end

run BenchApp
