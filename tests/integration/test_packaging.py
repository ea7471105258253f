"""Packaging: the Debian package CPack makes from this build tree, the programs, units,
completions and man pages in it, and `cmake --install` of the same tree.

The build tree is the parent of AGENT_BIN_DIR and is complete when CTest runs, so CPack
only installs and packs it. The package is made once per run, into a temp dir.
"""
import gzip
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest

from harness import BIN, Env

BUILD = os.path.dirname(os.path.abspath(BIN))
UNITS = "usr/lib/systemd/user"
EXPECTED_FILES = {
    "usr/bin/agent", "usr/bin/agentd", "usr/bin/agentd-net-bridge",
    UNITS + "/agentd.service", UNITS + "/agentd.socket",
    "usr/share/bash-completion/completions/agent",
    "usr/share/zsh/vendor-completions/_agent",
    "usr/share/man/man1/agent.1.gz", "usr/share/man/man8/agentd.8.gz",
    "usr/share/doc/agentd/copyright",
}
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
SUBCOMMANDS = ["ls", "attach", "resume", "fork", "steer", "wait", "rm", "undo", "diff", "trust",
               "daemon", "mcp", "sandbox", "acp"]


def cache_value(name):
    with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split("=", 1)[1].strip()
    return None


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)


def unit_settings(path):
    """The key=value lines of a unit file, comments left out."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", "[")) and "=" in line:
                key, value = line.split("=", 1)
                out[key] = value
    return out


@unittest.skipUnless(shutil.which("dpkg-deb"), "dpkg-deb is not installed (apt install dpkg-dev)")
class DebianPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="agt-pkg-", dir="/tmp")
        cls.version = cache_value("CMAKE_PROJECT_VERSION")
        cpack = cache_value("CMAKE_CPACK_COMMAND") or shutil.which("cpack")
        out = os.path.join(cls.tmp, "out")
        # For a Makefile tree CPack first builds its "preinstall" target, which may re-run
        # CMake and build, while other tests run these binaries. Naming Ninja, whose CPack
        # path has no such step, makes it install and pack only.
        r = run([cpack, "-G", "DEB", "-B", out, "-D", "CPACK_CMAKE_GENERATOR=Ninja"], cwd=BUILD)
        if r.returncode != 0:
            shutil.rmtree(cls.tmp, ignore_errors=True)
            raise AssertionError("cpack failed:\n" + r.stdout + r.stderr)
        arch = run(["dpkg", "--print-architecture"]).stdout.strip()
        cls.deb = os.path.join(out, "agentd_%s_%s.deb" % (cls.version, arch))
        cls.root = os.path.join(cls.tmp, "root")
        subprocess.run(["dpkg-deb", "-x", cls.deb, cls.root], check=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_package_has_the_debian_file_name(self):
        self.assertTrue(os.path.isfile(self.deb), os.listdir(os.path.dirname(self.deb)))

    def test_control_fields_and_computed_depends(self):
        info = run(["dpkg-deb", "-I", self.deb])
        self.assertEqual(info.returncode, 0, info.stderr)
        fields = dict(re.findall(r"^ ([A-Z][A-Za-z-]+): (.*)$", info.stdout, re.M))
        self.assertEqual(fields.get("Package"), "agentd")
        self.assertEqual(fields.get("Version"), self.version)
        self.assertEqual(fields.get("Section"), "devel")
        self.assertIn("@", fields.get("Maintainer", ""))
        self.assertIn("coding agent", fields.get("Description", ""))
        # shlibdeps names the libraries the binaries link, with versions.
        depends = fields.get("Depends", "")
        self.assertRegex(depends, r"\blibc6 \(>= [0-9.]+\)")
        self.assertRegex(depends, r"\blibcurl4 \(>= 7\.66\)")  # opened by agentd at run time
        self.assertRegex(depends, r"\blibssl3\b")  # gRPC's TLS, shared in every build
        if cache_value("AGENT_STATIC") == "ON":
            # gRPC, protobuf, Abseil and libedit are linked in (cmake/StaticLink.cmake).
            self.assertNotRegex(depends, r"libgrpc|libprotobuf|libabsl|libedit")
        else:
            self.assertRegex(depends, r"\blibgrpc\+\+[0-9.]+\b")

    def test_listing_has_programs_units_completions_and_man_pages(self):
        listing = run(["dpkg-deb", "-c", self.deb])
        self.assertEqual(listing.returncode, 0, listing.stderr)
        modes = {}
        for line in listing.stdout.splitlines():
            parts = line.split()
            modes[parts[-1].removeprefix("./")] = parts[0]
        for path in EXPECTED_FILES:
            self.assertIn(path, modes)
        self.assertEqual(modes["usr/bin/agent"], "-rwxr-xr-x")
        self.assertEqual(modes["usr/bin/agentd"], "-rwxr-xr-x")
        self.assertEqual(modes["usr/bin/agentd-net-bridge"], "-rwxr-xr-x")
        self.assertEqual(modes[UNITS + "/agentd.socket"], "-rw-r--r--")

    def test_packaged_programs_print_version_revision_and_protocol(self):
        for prog in ("agent", "agentd"):
            packaged = run([os.path.join(self.root, "usr/bin", prog), "--version"])
            self.assertEqual(packaged.returncode, 0, packaged.stderr)
            self.assertRegex(packaged.stdout,
                             r"^%s %s \(git ([0-9a-f]{12}|unknown), protocol [0-9]+\)\n$"
                             % (prog, re.escape(self.version)))
            built = run([os.path.join(BIN, prog), "--version"])
            self.assertEqual(packaged.stdout, built.stdout)

    def test_units_serve_the_clients_default_socket_privately(self):
        sock = unit_settings(os.path.join(self.root, UNITS, "agentd.socket"))
        self.assertEqual(sock["ListenStream"], "%t/agent/agentd.sock")
        self.assertEqual(sock["SocketMode"], "0600")
        self.assertEqual(sock["DirectoryMode"], "0700")
        self.assertEqual(sock["WantedBy"], "sockets.target")
        service = unit_settings(os.path.join(self.root, UNITS, "agentd.service"))
        self.assertEqual(service["ExecStart"], "/usr/bin/agentd")
        self.assertEqual(service["Requires"], "agentd.socket")

    def test_man_pages_are_gzipped_roff_with_the_version(self):
        for path, title in (("usr/share/man/man1/agent.1.gz", ".TH AGENT 1"),
                            ("usr/share/man/man8/agentd.8.gz", ".TH AGENTD 8")):
            with gzip.open(os.path.join(self.root, path), "rt") as f:
                text = f.read()
            th = next(line for line in text.splitlines() if line.startswith(".TH"))
            self.assertTrue(th.startswith(title), th)
            self.assertIn("agentd " + self.version, th)
            self.assertIn(".SH SYNOPSIS", text)
        if shutil.which("man"):
            r = run(["man", "--warnings", "-l", os.path.join(self.root, "usr/share/man/man1/agent.1.gz")],
                    env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")  # groff warnings would be here
            page = re.sub(".\x08", "", r.stdout)  # overstrike bold and underline
            page = re.sub("[\u2010-]\n\\s*", "", page)  # words hyphenated at a line end (locale)
            self.assertIn("--continue", page)
            self.assertIn("$XDG_RUNTIME_DIR/agent/agentd.sock", page)

    # ---- the packaged daemon under socket activation ---------------------------------
    def start_socket_activated_daemon(self, env):
        """What systemd does for agentd.socket: it listens, then starts agentd with the
        socket as fd 3, LISTEN_FDS=1 and LISTEN_PID=agentd's pid."""
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(env.socket)
        os.chmod(env.socket, 0o600)
        listener.listen(16)
        n = listener.fileno()
        agentd = os.path.join(self.root, "usr/bin/agentd")
        daemon = subprocess.Popen(
            ["/bin/sh", "-c", 'LISTEN_PID=$$; export LISTEN_PID; exec "$0" 3<&%d %d<&-' % (n, n),
             agentd],
            env=dict(env.env, LISTEN_FDS="1"), pass_fds=(n,),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        return listener, daemon

    def test_socket_activated_daemon_serves_the_packaged_client(self):
        env = Env([{"text": "hello from a socket-activated daemon"}])
        self.addCleanup(env.close)
        listener, daemon = self.start_socket_activated_daemon(env)

        def stop():
            if daemon.poll() is None:
                daemon.kill()
            daemon.wait(timeout=10)
            daemon.stderr.close()
            listener.close()
        self.addCleanup(stop)
        agent = os.path.join(self.root, "usr/bin/agent")
        r = run([agent, "--json", "say hello"], env=env.env, cwd=env.project)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hello from a socket-activated daemon", r.stdout)
        # The client used the daemon it found instead of starting one of its own.
        self.assertEqual(env.daemon_pids(), [])
        status = run([agent, "daemon", "status"], env=env.env, cwd=env.project)
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertIn("pid %d " % daemon.pid, status.stdout)
        # `agent daemon stop` would only be restarted by the socket: it says to ask systemd.
        stop_cmd = run([agent, "daemon", "stop"], env=env.env, cwd=env.project)
        self.assertEqual(stop_cmd.returncode, 1)
        self.assertIn("systemctl --user stop agentd.socket", stop_cmd.stdout)
        self.assertIsNone(daemon.poll())
        # SIGTERM (systemctl stop) ends it cleanly, and the socket, which systemd owns, stays.
        daemon.send_signal(signal.SIGTERM)
        self.assertEqual(daemon.wait(timeout=30), 0, daemon.stderr.read())
        self.assertTrue(stat.S_ISSOCK(os.lstat(env.socket).st_mode))

    # ---- completions --------------------------------------------------------------------
    def complete_bash(self, env, library, *words):
        """COMPREPLY of the packaged bash completion for the command line `words` (the last
        word is the one being completed), with the packaged agent first on PATH; `library`
        is bash-completion's main script, or None for plain bash."""
        script = ('[ -n "$1" ] && source "$1"; source "$2"; shift 2; COMP_WORDS=("$@"); '
                  'COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _agent; '
                  'printf "%s\\n" "${COMPREPLY[@]}"')
        e = dict(env.env, PATH=os.path.join(self.root, "usr/bin") + ":" + os.environ["PATH"])
        r = run(["bash", "--norc", "--noprofile", "-c", script, "bash", library or "",
                 os.path.join(self.root, "usr/share/bash-completion/completions/agent"), *words],
                env=e, cwd=env.project)
        self.assertEqual(r.returncode, 0, r.stderr)
        return sorted(w for w in r.stdout.splitlines() if w)

    def test_bash_completes_subcommands_flags_and_session_ids(self):
        env = Env([{"text": "one"}])
        self.addCleanup(env.close)
        libraries = [None]
        if os.path.exists(BASH_COMPLETION):
            libraries.append(BASH_COMPLETION)
        for lib in libraries:
            with self.subTest(library=lib):
                self.assertEqual(self.complete_bash(env, lib, "agent", ""), sorted(SUBCOMMANDS))
                self.assertEqual(self.complete_bash(env, lib, "agent", "--con"), ["--continue"])
                self.assertEqual(self.complete_bash(env, lib, "agent", "--res"), ["--resume"])
                self.assertEqual(self.complete_bash(env, lib, "agent", "-"),
                                 sorted(["--json", "--json-snapshot", "-y", "--yes", "--auto", "--accept-edits",
                                         "--plan", "--plain", "-r", "--resume",
                                         "-c", "--continue", "--version", "-h", "--help",
                                         "--read-only", "-p", "--print", "--model",
                                         "--host", "--cd", "--remote-bin"]))
                self.assertEqual(self.complete_bash(env, lib, "agent", "daemon", "st"),
                                 ["status", "stop"])
                # The remote options come before the subcommand, which still completes.
                remote = ("agent", "--host", "me@build01", "--cd", "src")
                self.assertEqual(self.complete_bash(env, lib, *remote, ""), sorted(SUBCOMMANDS))
                self.assertEqual(self.complete_bash(env, lib, *remote, "daemon", "st"),
                                 ["status", "stop"])
                self.assertEqual(self.complete_bash(env, lib, *remote, "fix", "t"), [])
                self.assertEqual(self.complete_bash(env, lib, "agent", "--cd", ""), [])
                self.assertEqual(self.complete_bash(env, lib, "agent", "mcp", ""),
                                 ["add", "approve", "ls", "rm"])
                self.assertEqual(self.complete_bash(env, lib, "agent", "fix", "t"), [])
                self.assertEqual(self.complete_bash(env, lib, "agent", "undo", "--"),
                                 ["--help", "--overwrite", "--turns", "--yes"])
                # No daemon yet: no ids, and completing did not start one.
                self.assertEqual(self.complete_bash(env, lib, "agent", "rm", ""), [])
                self.assertFalse(os.path.exists(env.socket))
        # A session, then its id (the first column of `agent ls`) for rm, fork, attach, -r.
        agent = os.path.join(self.root, "usr/bin/agent")
        r = run([agent, "hello"], env=env.env, cwd=env.project)
        self.assertEqual(r.returncode, 0, r.stderr)
        ids = env.session_ids()
        self.assertEqual(len(ids), 1)
        listed = run([agent, "ls"], env=env.env, cwd=env.project)
        shown = listed.stdout.splitlines()[1].split()[0]  # under the header
        self.assertTrue(ids[0].startswith(shown), listed.stdout)
        for lib in libraries:
            with self.subTest(library=lib):
                for words in (("rm", ""), ("fork", ""), ("attach", ""), ("-r", ""),
                              ("--resume", ""), ("--resume", "=", ""), ("rm", shown[:3])):
                    self.assertEqual(self.complete_bash(env, lib, "agent", *words), [shown],
                                     words)
                self.assertEqual(self.complete_bash(env, lib, "agent", "rm", "zz"), [])
                self.assertEqual(self.complete_bash(env, lib, "agent", "attach", "-"),
                                 ["--help", "--plain", "--read-only", "-r"])

    @unittest.skipUnless(shutil.which("zsh") and shutil.which("tmux"), "needs zsh and tmux")
    def test_zsh_completes_subcommands_flags_and_session_ids(self):
        """A real interactive zsh in tmux, with compinit and the packaged _agent."""
        completions = os.path.join(self.root, "usr/share/zsh/vendor-completions")
        with open(os.path.join(completions, "_agent")) as f:
            self.assertEqual(f.readline().strip(), "#compdef agent")
        env = Env([{"text": "one"}])
        self.addCleanup(env.close)
        agent = os.path.join(self.root, "usr/bin/agent")
        r = run([agent, "hello"], env=env.env, cwd=env.project)
        self.assertEqual(r.returncode, 0, r.stderr)
        shown = run([agent, "ls"], env=env.env, cwd=env.project).stdout.splitlines()[1].split()[0]
        # Files named like the words after `agent`: completing must never run them as commands.
        for name in ("rm", "ls", "daemon", "status"):
            open(os.path.join(env.project, name), "w").close()
        tmux = ["tmux", "-L", "agt-pkg-%d" % os.getpid(), "-f", "/dev/null"]
        e = dict(env.env, PATH=os.path.join(self.root, "usr/bin") + ":" + os.environ["PATH"],
                 TERM="xterm")
        subprocess.run(tmux + ["new-session", "-d", "-x", "160", "-y", "40", "-c", env.project,
                               "zsh", "-f"], env=e, check=True, timeout=30)
        self.addCleanup(subprocess.run, tmux + ["kill-server"], capture_output=True, timeout=30)

        def screen():
            return subprocess.run(tmux + ["capture-pane", "-p"], capture_output=True,
                                  text=True, timeout=30).stdout

        def wait_for(*patterns):
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # the pane has no event to wait on: poll it
                shot = screen()
                if all(re.search(p, shot, re.M) for p in patterns):
                    return shot
                time.sleep(0.02)
            self.fail("%r not on the screen:\n%s" % (patterns, screen()))

        def complete(line, *expected):
            subprocess.run(tmux + ["send-keys", "C-u", "C-l"], check=True, timeout=30)
            wait_for(r"\AREADY>$")
            subprocess.run(tmux + ["send-keys", "-l", line], check=True, timeout=30)
            subprocess.run(tmux + ["send-keys", "Tab"], check=True, timeout=30)
            return wait_for(*expected)

        subprocess.run(tmux + ["send-keys", "-l",
                               "fpath=(%s $fpath); autoload -Uz compinit; compinit -u -D; "
                               "zstyle ':completion:*' format '[%%d]'; PS1='READY> '"
                               % completions], check=True, timeout=30)
        subprocess.run(tmux + ["send-keys", "Enter"], check=True, timeout=30)
        wait_for(r"^READY>$")
        complete("agent ", r"^\[agent command\]$", *[r"^%s +-- " % c for c in SUBCOMMANDS])
        complete("agent --con", r"^READY> agent --continue$")
        complete("agent daemon sto", r"^READY> agent daemon stop$")
        # The remote options come before the subcommand, which still completes.
        complete("agent --host me@build01 --cd src daemon sto",
                 r"^READY> agent --host me@build01 --cd src daemon stop$")
        complete("agent --host me@build01 ", r"^\[agent command\]$")
        for words in ("rm", "fork", "attach", "-r"):
            complete("agent %s " % words, r"^READY> agent %s %s$" % (words, shown))
        complete("agent attach --r", r"^READY> agent attach --read-only$")
        for name in ("rm", "ls", "daemon", "status"):
            self.assertTrue(os.path.exists(os.path.join(env.project, name)), name)

    # ---- cmake --install ----------------------------------------------------------------
    def test_cmake_install_puts_the_same_files_under_the_prefix(self):
        prefix = os.path.join(self.tmp, "prefix")
        r = run(["cmake", "--install", BUILD, "--prefix", prefix])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        installed = set()
        for d, _, files in os.walk(prefix):
            for name in files:
                installed.add(os.path.relpath(os.path.join(d, name), prefix))
        packaged = set()
        for d, _, files in os.walk(os.path.join(self.root, "usr")):
            for name in files:
                packaged.add(os.path.relpath(os.path.join(d, name), os.path.join(self.root, "usr")))
        self.assertEqual(installed, packaged)
        self.assertEqual({"usr/" + p for p in packaged}, EXPECTED_FILES)
        for prog in ("agent", "agentd"):
            mine = run([os.path.join(prefix, "bin", prog), "--version"])
            self.assertEqual(mine.returncode, 0, mine.stderr)
            self.assertEqual(mine.stdout, run([os.path.join(BIN, prog), "--version"]).stdout)
        # The service starts the agentd of this prefix, not /usr/bin's.
        service = unit_settings(os.path.join(prefix, "lib/systemd/user/agentd.service"))
        self.assertEqual(service["ExecStart"], os.path.join(prefix, "bin", "agentd"))
        for same in ("lib/systemd/user/agentd.socket", "share/bash-completion/completions/agent",
                     "share/man/man1/agent.1.gz"):
            with open(os.path.join(prefix, same), "rb") as a, \
                    open(os.path.join(self.root, "usr", same), "rb") as b:
                self.assertEqual(a.read(), b.read(), same)
        # With its ExecStart present, systemd itself can check the units.
        if shutil.which("systemd-analyze"):
            runtime = os.path.join(self.tmp, "runtime")
            os.makedirs(runtime, mode=0o700, exist_ok=True)
            units = os.path.join(prefix, "lib/systemd/user")
            v = run(["systemd-analyze", "verify", "--user", "--man=no",
                     os.path.join(units, "agentd.socket"), os.path.join(units, "agentd.service")],
                    env=dict(os.environ, XDG_RUNTIME_DIR=runtime))
            if "Failed to initialize manager" not in v.stderr:  # no user manager possible here
                self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
                self.assertEqual(v.stdout + v.stderr, "")


if __name__ == "__main__":
    unittest.main()
