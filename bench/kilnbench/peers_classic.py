"""The reports' classic stacks as peers: lighttpd with FastCGI and CGI programs, Apache with
mod_php, Rails on puma, thin and WEBrick, twisted, EventMachine, and Ruby + EventMachine +
fibers + the pg driver's async API for the non-blocking report's `/mix`.

Each entry installs what it lacks itself (executables through the runner's `tools`, libraries
and Ruby packages through a build step that runs `python3 -m kilnbench.install`,
which calls apt-get and says so), builds into `bench/.build/<name>/`, renders its config there
at launch from a template in `bench/peers/<folder>/`, and runs in the foreground in the
runner's process group: SIGTERM to the group reaches lighttpd's FastCGI children and Apache's
workers alike.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
from pathlib import Path
from string import Template

from .install import debian_version
from .servers import Launch, Options, Paths, Server, Step, Unsupported, _first_line, debian_packages, _peer_env, is_postgres

FASTCGI_PROCS_REPORT = 20
"""FastCGI processes the Ocsigen report's lighttpd needed to keep up."""

APACHE_PREFORK_WORKERS = 150
"""Apache prefork processes at most: with mod_php each keep-alive connection holds one, so this
must exceed the suite's 100 connections (a connection beyond it waits for a free process)."""

APACHE_PREFORK_STARTED = 110
"""Prefork processes started at once and kept spare, so a run does not measure Apache forking."""

APACHE_EVENT_THREADS = 256
"""Worker threads of the one Apache event-MPM process that serves the file: well above the suite's
100 connections, since with every thread busy the event MPM closes keep-alive connections
(wrk counts each as a read error)."""

PUMA_THREADS = 5
"""Puma's thread pool, as a generated Rails 6.1 app configures it."""

RAILS_PACKAGES = ("ruby-rails", "ruby-webrick")
EM_PACKAGES = ("ruby-eventmachine", "ruby-http-parser.rb")


# ---------------------------------------------------------------- shared pieces


def _home(paths: Paths, name: str) -> Path:
    """The entry's own folder under .build: its binaries, rendered config and logs."""
    return paths.build / name


def _sbin(executable: str) -> str:
    """An executable that may live in /usr/sbin, which a non-root PATH often lacks."""
    return shutil.which(executable) or shutil.which(executable, path="/usr/sbin:/sbin") or executable


def _render(template: Path, out: Path, **values: object) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(Template(template.read_text()).substitute({k: str(v) for k, v in values.items()}))
    return out





# ---------------------------------------------------------------- lighttpd


def _lighttpd(
    name: str,
    description: str,
    modules: tuple[str, ...],
    handler: str,
    build=lambda paths: [],
    values=lambda paths: {},
    tools: dict[str, str] | None = None,
    also: list[str] | None = None,
    workloads: frozenset[str] | None = None,
) -> Server:
    """lighttpd, one process, with `handler` (a config fragment, a template itself) after the
    common settings of peers/lighttpd/lighttpd.conf.template; `also` prints the version of
    what it runs besides itself."""

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        home = _home(paths, name)
        fragment = Template(handler).substitute({k: str(v) for k, v in values(paths).items()}, home=home, static=paths.static)
        max_fds = _max_fds()
        conf = _render(
            paths.peers / "lighttpd" / "lighttpd.conf.template",
            home / "lighttpd.conf",
            modules=", ".join(f'"{m}"' for m in modules),
            port=port,
            max_fds=max_fds,
            max_conns=max_fds // 2,
            static=paths.static,
            home=home,
            handler=fragment,
        )
        return Launch([_sbin("lighttpd"), "-D", "-f", str(conf)], cwd=home)

    def version(paths: Paths) -> str:
        lighttpd = _first_line([_sbin("lighttpd"), "-v"]).split(" - ")[0]
        return f"{lighttpd}, {_first_line(also)}" if also else lighttpd

    return Server(name, description, build, launch, version, tools={"lighttpd": "lighttpd", **(tools or {})}, workloads=workloads)


def _max_fds() -> int:
    """As many descriptors as lighttpd may have (it wants at least two per connection), for the
    suite's 10,000 idle connections when the limit allows."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return min(65536, hard if hard != resource.RLIM_INFINITY else 65536)


def _fastcgi_app(paths: Paths) -> Path:
    return _home(paths, "lighttpd") / "fastcgi-app"


def _build_fastcgi_app(paths: Paths) -> list[Step]:
    _home(paths, "lighttpd").mkdir(parents=True, exist_ok=True)
    source = paths.peers / "lighttpd" / "app.c"
    return [
        debian_packages(paths, "libfcgi-dev"),
        Step(["gcc", "-O2", "-Wall", "-o", str(_fastcgi_app(paths)), str(source), "-lfcgi"], paths.root),
    ]


FASTCGI = """fastcgi.server = ( "/" => ( (
    "bin-path" => "$app",
    "socket" => "$home/fastcgi.sock",
    "min-procs" => $procs,
    "max-procs" => $procs,
    "check-local" => "disable"
) ) )"""


def lighttpd_fastcgi(name: str, procs: int) -> Server:
    """lighttpd in front of the C FastCGI program (pong, hello, plaintext and bigtable)."""
    return _lighttpd(
        name,
        f"lighttpd 1 process + C FastCGI app (FCGX_Accept_r loop), {procs} FastCGI process{'es' if procs > 1 else ''}",
        ("mod_fastcgi",),
        FASTCGI,
        build=_build_fastcgi_app,
        values=lambda paths: {"app": _fastcgi_app(paths), "procs": procs},
        tools={"gcc": "gcc"},
    )


def lighttpd_file() -> Server:
    return _lighttpd(
        "lighttpd",
        "lighttpd 1 process serving the file (mod_staticfile, sendfile)",
        ("mod_alias",),
        'alias.url = ( "/static/" => "$static/" )',
    )


CGI = """alias.url = ( "/bigtable" => "$script" )
cgi.assign = ( "$extension" => "$interpreter" )"""


def _python_for_cgi() -> str:
    """Debian's python3 (a pyenv shim on PATH is a shell script that adds its own start-up)."""
    return "/usr/bin/python3" if Path("/usr/bin/python3").exists() else (shutil.which("python3") or "python3")


def cgi_bigtable(language: str) -> Server:
    """The Yesod report's CGI bigtable program in C, Perl or Python, under lighttpd's mod_cgi:
    one process forked and exec'd per request."""
    name = f"cgi-{language}"
    source = {"c": "bigtable.c", "perl": "bigtable.pl", "python": "bigtable.py"}[language]

    def script(paths: Paths) -> Path:
        if language == "c":
            return _home(paths, name) / "bigtable.cgi"
        return paths.peers / "cgi-bigtable" / source

    def build(paths: Paths) -> list[Step]:
        if language != "c":
            return []
        _home(paths, name).mkdir(parents=True, exist_ok=True)
        return [Step(["gcc", "-O2", "-Wall", "-o", str(script(paths)), str(paths.peers / "cgi-bigtable" / source)], paths.root)]

    def values(paths: Paths) -> dict[str, object]:
        extension, interpreter = {
            "c": (".cgi", ""),
            "perl": (".pl", shutil.which("perl") or "/usr/bin/perl"),
            "python": (".py", _python_for_cgi()),
        }[language]
        return {"script": script(paths), "extension": extension, "interpreter": interpreter}

    tools = {"c": {"gcc": "gcc"}, "perl": {"perl": "perl"}, "python": {"python3": "python3"}}[language]
    also = {"c": ["gcc", "--version"], "perl": ["perl", "-e", 'print "perl $^V"'], "python": [_python_for_cgi(), "--version"]}
    language_name = {"c": "C", "perl": "Perl", "python": "Python"}[language]
    return _lighttpd(
        name,
        f"lighttpd 1 process + mod_cgi, the bigtable as a CGI program in {language_name} (a process per request)",
        ("mod_alias", "mod_cgi"),
        CGI,
        build=build,
        values=values,
        tools=tools,
        also=also[language],
        # Only the bigtable family (wrk and the report's ab): at 100 connections a process per
        # request keeps one core busy for seconds after a run, long enough for the next
        # workload's probe of a path it lacks to time out.
        workloads=frozenset({"bigtable"}),
    )


# ---------------------------------------------------------------- Apache

PREFORK = f"""StartServers {APACHE_PREFORK_STARTED}
MinSpareServers {APACHE_PREFORK_STARTED}
MaxSpareServers {APACHE_PREFORK_WORKERS}
ServerLimit {APACHE_PREFORK_WORKERS}
MaxRequestWorkers {APACHE_PREFORK_WORKERS}
MaxConnectionsPerChild 0"""

EVENT_ONE_PROCESS = f"""StartServers 1
ServerLimit 1
ThreadLimit {APACHE_EVENT_THREADS}
ThreadsPerChild {APACHE_EVENT_THREADS}
MaxRequestWorkers {APACHE_EVENT_THREADS}
MinSpareThreads 1
MaxSpareThreads {APACHE_EVENT_THREADS}
# Idle keep-alive connections wait in the event loop, not on a thread: let one process hold
# the suite's 10,000 of them.
AsyncRequestWorkerFactor 200
MaxConnectionsPerChild 0"""

PHP_ROUTES = """<FilesMatch "\\.php$$">
    SetHandler application/x-httpd-php
</FilesMatch>
<Directory "$php">
    Require all granted
</Directory>
Alias /pong "$php/pong.php"
Alias /hello "$php/hello.php"
Alias /plaintext "$php/plaintext.php"
Alias /json "$php/json.php"
"""

STATIC_ALIAS = """<Directory "$static">
    Require all granted
</Directory>
Alias /static/ "$static/"
"""


def _apache(name: str, description: str, mpm: str, mpm_settings: str, modules: str, handler: str, build) -> Server:
    """Apache 2.4 in the foreground with peers/apache/httpd.conf.template, the `mpm` and its
    settings, extra `modules` and what it serves (`handler`, a template itself)."""

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        home = _home(paths, name)
        (home / "empty").mkdir(parents=True, exist_ok=True)
        fragment = Template(handler).substitute(php=paths.peers / "apache" / "php", static=paths.static)
        conf = _render(
            paths.peers / "apache" / "httpd.conf.template",
            home / "httpd.conf",
            port=port,
            home=home,
            # Apache's workers may not run as root; as root they become www-data.
            user="User www-data\nGroup www-data" if os.geteuid() == 0 else "",
            mpm=mpm,
            mpm_settings=mpm_settings,
            modules=modules,
            handler=fragment,
        )
        return Launch([_sbin("apache2"), "-f", str(conf), "-DFOREGROUND"], cwd=home)

    def version(paths: Paths) -> str:
        apache = _first_line([_sbin("apache2"), "-v"]).removeprefix("Server version: ")
        return f"{apache}, PHP {debian_version('libapache2-mod-php8.2')}" if "php" in name else apache

    return Server(name, description, build, launch, version, tools={"apache2": "apache2"})


def apache_php() -> Server:
    """Apache 2.4 prefork + mod_php, as the Snap report's Apache + PHP: a process per connection,
    PHP for the dynamic endpoints, Apache itself for the file."""
    return _apache(
        "apache-php",
        f"Apache 2.4 prefork + mod_php (opcache), {APACHE_PREFORK_STARTED}-{APACHE_PREFORK_WORKERS} processes "
        "(one per keep-alive connection)",
        "prefork",
        PREFORK,
        "LoadModule php_module /usr/lib/apache2/modules/libphp8.2.so",
        # The Snap report's Apache + PHP answered pong in PHP and served the file itself.
        PHP_ROUTES + STATIC_ALIAS,
        lambda paths: [debian_packages(paths, "libapache2-mod-php")],
    )


def apache_file() -> Server:
    """Apache 2.4 serving the file: the event MPM, one serving process."""
    return _apache(
        "apache",
        f"Apache 2.4 event MPM, 1 process of {APACHE_EVENT_THREADS} threads, serving the file",
        "event",
        EVENT_ONE_PROCESS,
        "",
        STATIC_ALIAS,
        lambda paths: [],
    )


# ---------------------------------------------------------------- Rails


def _ruby_version() -> str:
    return _first_line(["ruby", "-e", 'print "Ruby #{RUBY_VERSION}"'])


def rails(server: str) -> Server:
    """The one-file Rails app (peers/rails/config.ru) on puma (mongrel's successor), thin, or
    WEBrick (the Snap report's out-of-the-box server); one process each."""
    name = f"rails-{server}"

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        home = _home(paths, name)
        home.mkdir(parents=True, exist_ok=True)
        app = paths.peers / "rails"
        argv = {
            "puma": ["puma", "--bind", f"tcp://127.0.0.1:{port}", "--threads", f"{PUMA_THREADS}:{PUMA_THREADS}",
                     "--environment", "production", "--quiet", str(app / "config.ru")],
            "thin": ["thin", "start", "--rackup", str(app / "config.ru"), "--address", "127.0.0.1", "--port", str(port),
                     "--environment", "production", "--max-conns", str(_max_fds() // 2),
                     "--max-persistent-conns", str(_max_fds() // 2), "--quiet"],
            "webrick": ["ruby", str(app / "webrick.rb")],
        }[server]  # fmt: skip
        env = _peer_env(paths, port, opts) | {
            "RAILS_ENV": "production",
            "RACK_ENV": "production",
            "RAILS_APP_ROOT": str(home),
            "RAILS_SERVER_NAME": server,
        }
        return Launch(argv, env, cwd=home)

    def version(paths: Paths) -> str:
        rails_version = _first_line(["ruby", "-e", 'require "rails"; print "Rails #{Rails.version}"'])
        server_version = {
            "puma": lambda: _first_line(["puma", "--version"]),
            "thin": lambda: _first_line(["thin", "--version"]).split(" codename")[0],
            "webrick": lambda: _first_line(["ruby", "-e", 'require "webrick"; print "WEBrick #{WEBrick::VERSION}"']),
        }[server]()
        return f"{rails_version} on {server_version}, {_ruby_version()}"

    what = {
        "puma": f"Rails 6.1 (one-file app, production) on puma, 1 process of {PUMA_THREADS} threads (mongrel's successor)",
        "thin": "Rails 6.1 (one-file app, production) on thin, 1 process (EventMachine)",
        "webrick": "Rails 6.1 (one-file app, production) on WEBrick, 1 process, TCP_NODELAY set (the out-of-the-box server)",
    }[server]
    packages = RAILS_PACKAGES + ({"puma": ("puma",), "thin": ("thin",), "webrick": ()}[server])
    executable = {"puma": {"puma": "puma"}, "thin": {"thin": "thin"}, "webrick": {}}[server]
    return Server(
        name,
        what,
        lambda paths: [debian_packages(paths, *packages)],
        launch,
        version,
        tools={"ruby": "ruby", **executable},
    )


# ---------------------------------------------------------------- twisted, EventMachine


def twisted() -> Server:
    """twisted.web on the epoll reactor, one process, from PyPI in a venv under .build."""

    def venv(paths: Paths) -> Path:
        return _home(paths, "twisted") / "venv"

    def build(paths: Paths) -> list[Step]:
        requirements = paths.peers / "twisted" / "requirements.txt"
        return [
            Step([sys.executable, "-m", "venv", str(venv(paths))], paths.root),
            Step([str(venv(paths) / "bin" / "pip"), "install", "-q", "-r", str(requirements)], paths.root),
        ]

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        python = str(venv(paths) / "bin" / "python")
        return Launch([python, str(paths.peers / "twisted" / "server.py")], _peer_env(paths, port, opts))

    def version(paths: Paths) -> str:
        python = str(venv(paths) / "bin" / "python")
        code = "import sys, twisted; print(twisted.__version__, 'on Python', sys.version.split()[0])"
        return "twisted " + _first_line([python, "-c", code])

    # twisted keeps only HTTP/1.1 connections alive: under `ab -k` (HTTP/1.0) every request reconnects.
    what = "twisted.web, epoll reactor, one process (no HTTP/1.0 keep-alive)"
    return Server("twisted", what, build, launch, version, tools={"python3": "python3"})


def eventmachine() -> Server:
    """A handler on EM::Connection + http_parser.rb, one reactor (evma_httpserver is a gem only)."""

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        return Launch(["ruby", str(paths.peers / "eventmachine" / "server.rb")], _peer_env(paths, port, opts))

    def version(paths: Paths) -> str:
        return f"EventMachine {debian_version('ruby-eventmachine')}, http_parser.rb {debian_version('ruby-http-parser.rb')}, {_ruby_version()}"

    return Server(
        "eventmachine",
        "Ruby EventMachine, one reactor, handler on EM::Connection + http_parser.rb",
        lambda paths: [debian_packages(paths, *EM_PACKAGES)],
        launch,
        version,
        tools={"ruby": "ruby"},
    )


def ruby_em_pg() -> Server:
    """The non-blocking Ruby report's stack: EventMachine + fibers + ruby-pg's async API, serving
    /mix/blocking and /mix/async on the run's PostgreSQL."""

    def launch(paths: Paths, port: int, opts: Options) -> Launch:
        if not is_postgres(opts.database_url):
            raise Unsupported("the non-blocking report's stack needs PostgreSQL: run with --database postgres://...")
        return Launch(["ruby", str(paths.peers / "ruby-em-pg" / "server.rb")], _peer_env(paths, port, opts))

    def version(paths: Paths) -> str:
        pg = _first_line(["ruby", "-e", 'require "pg"; print "ruby-pg #{PG::VERSION} (libpq #{PG.library_version})"'])
        return f"EventMachine {debian_version('ruby-eventmachine')}, {pg}, {_ruby_version()}"

    return Server(
        "ruby-em-pg",
        "Ruby EventMachine + fibers + ruby-pg async API, one reactor; async: 4 connections for short queries, "
        "16 for long; blocking: one connection that blocks the reactor",
        lambda paths: [debian_packages(paths, "ruby-pg", *EM_PACKAGES)],
        launch,
        version,
        tools={"ruby": "ruby"},
    )


SERVERS: list[Server] = [
    lighttpd_fastcgi("lighttpd-fcgi-1", 1),
    lighttpd_fastcgi("lighttpd-fcgi-20", FASTCGI_PROCS_REPORT),
    lighttpd_file(),
    cgi_bigtable("c"),
    cgi_bigtable("perl"),
    cgi_bigtable("python"),
    apache_php(),
    apache_file(),
    rails("puma"),
    rails("thin"),
    rails("webrick"),
    twisted(),
    eventmachine(),
    ruby_em_pg(),
]
